package collabtest

import (
	"net/http"
	"strings"

	"github.com/collabsvc/collab"
)

func (s *Server) memberRoutes() {
	s.api("GET /projects/{id}/members", rule{}, s.listProjectMembers)
	s.api("GET /projects/{id}/members/{user_id}", rule{}, s.getProjectMember)
	s.api("POST /projects/{id}/members", rule{level: levelMaster}, s.addProjectMember)
	s.api("PUT /projects/{id}/members/{user_id}", rule{level: levelMaster}, s.updateProjectMember)
	s.api("DELETE /projects/{id}/members/{user_id}", rule{level: levelMaster}, s.removeProjectMember)
	s.api("GET /groups/{gid}/members", rule{}, s.listGroupMembers)
	s.api("POST /groups/{gid}/members", rule{groupOwner: true}, s.addGroupMember)
	s.api("PUT /groups/{gid}/members/{user_id}", rule{groupOwner: true}, s.updateGroupMember)
	s.api("DELETE /groups/{gid}/members/{user_id}", rule{groupOwner: true}, s.removeGroupMember)
}

// memberJSON renders a member; group members carry no email.
func (s *Server) memberJSON(u *user, level int, withEmail bool) any {
	omit := memberOmit
	if !withEmail {
		omit = append(omit, "email")
	}
	return reply(&collab.Member{User: collab.User{ID: u.id, Username: u.username, Name: u.name,
		State: collab.UserState(u.state), CreatedAt: apiTime(u.createdAt), Email: u.email},
		AccessLevel: collab.AccessLevel(level)}, omit...)
}

// memberOmit are the keys of a brief user a member does not carry.
var memberOmit = []string{"avatar_url", "web_url"}

// memberUser reads user_id (from the path or the parameters): a user id,
// "404 User Not Found" otherwise.
func (c *call) memberUser() (*user, error) {
	if !c.has("user_id") {
		return nil, errMissing("user_id")
	}
	raw := c.str("user_id")
	u := c.s.findUser(raw)
	if u == nil || !isDigits(raw) {
		return nil, errNotFound("User")
	}
	return u, nil
}

// memberChange reads the user and a required access_level, which must be
// one of the five (badLevel answers otherwise).
func (c *call) memberChange(badLevel *apiError) (*user, int, error) {
	u, err := c.memberUser()
	if err != nil {
		return nil, 0, err
	}
	level, err := c.requiredInt("access_level")
	if err != nil {
		return nil, 0, err
	}
	if !validLevel(level) {
		return nil, 0, badLevel
	}
	return u, level, nil
}

var errProjectLevel = errInvalid("access_level", "is not included in the list")

func (s *Server) listProjectMembers(c *call) error {
	p := c.project
	q := strings.ToLower(c.str("query"))
	var out []*user
	for _, id := range sortedKeys(p.members) {
		if u := s.users[id]; u != nil && (q == "" || strings.Contains(strings.ToLower(u.username+" "+u.name), q)) {
			out = append(out, u)
		}
	}
	return page(c, out, func(u *user) any { return s.memberJSON(u, p.members[u.id], true) })
}

func (s *Server) getProjectMember(c *call) error {
	u, err := c.memberUser()
	if err != nil {
		return err
	}
	if c.project.members[u.id] == 0 {
		return errNotFound("Member")
	}
	return c.json(http.StatusOK, s.memberJSON(u, c.project.members[u.id], true))
}

func (s *Server) addProjectMember(c *call) error { return s.setProjectMember(c, true) }

func (s *Server) updateProjectMember(c *call) error { return s.setProjectMember(c, false) }

// setProjectMember answers an add (201), which is idempotent: an existing
// member comes back unchanged; or an update (404 for a non-member, 200).
func (s *Server) setProjectMember(c *call, adding bool) error {
	p := c.project
	u, level, err := c.memberChange(errProjectLevel)
	if err != nil {
		return err
	}
	status := http.StatusOK
	switch exists := p.members[u.id] > 0; {
	case adding && exists:
		return c.json(http.StatusCreated, s.memberJSON(u, p.members[u.id], true))
	case adding:
		p.members[u.id] = level
		s.addEvent(p.id, u.id, actionJoined, "", 0, "", 0)
		status = http.StatusCreated
	case !exists:
		return errNotFound("Member")
	default:
		p.members[u.id] = level
	}
	return c.json(status, s.memberJSON(u, level, true))
}

// removeProjectMember is idempotent, with two body shapes: the removed
// member, or {"message": "Access revoked", "id": ...} for a non-member.
func (s *Server) removeProjectMember(c *call) error {
	return s.removeMember(c, c.project.members, true, func(u *user) error {
		return c.json(http.StatusOK, map[string]any{"message": "Access revoked", "id": u.id})
	})
}

// removeMember takes the user named out of members and answers them as a
// member (withEmail: of a project); notMember answers for a user who is
// none.
func (s *Server) removeMember(c *call, members map[int]int, withEmail bool, notMember func(*user) error) error {
	u, err := c.memberUser()
	if err != nil {
		return err
	}
	level := members[u.id]
	if level == 0 {
		return notMember(u)
	}
	delete(members, u.id)
	return c.json(http.StatusOK, s.memberJSON(u, level, withEmail))
}

func (s *Server) listGroupMembers(c *call) error {
	g := c.group
	var out []*user
	for _, id := range sortedKeys(g.members) {
		if u := s.users[id]; u != nil {
			out = append(out, u)
		}
	}
	return all(c, out, func(u *user) any { return s.memberJSON(u, g.members[u.id], false) })
}

var errGroupLevel = errStatus(http.StatusUnprocessableEntity, "Wrong access level")

func (s *Server) addGroupMember(c *call) error { return s.setGroupMember(c, true) }

func (s *Server) updateGroupMember(c *call) error { return s.setGroupMember(c, false) }

// setGroupMember answers an add (409 for a member, 201) or an update (404
// for a non-member, 200).
func (s *Server) setGroupMember(c *call, adding bool) error {
	u, level, err := c.memberChange(errGroupLevel)
	if err != nil {
		return err
	}
	status := http.StatusOK
	switch exists := c.group.members[u.id] > 0; {
	case adding && exists:
		return errConflict("Already exists")
	case !adding && !exists:
		return errNotFound("Member")
	case adding:
		status = http.StatusCreated
	}
	c.group.members[u.id] = level
	return c.json(status, s.memberJSON(u, level, false))
}

func (s *Server) removeGroupMember(c *call) error {
	return s.removeMember(c, c.group.members, false, func(*user) error { return errNotFound("Member") })
}
