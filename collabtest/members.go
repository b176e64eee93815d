package collabtest

import (
	"net/http"
	"strings"
)

func (s *Server) memberRoutes() {
	s.handle("GET", "/projects/:id/members", s.listProjectMembers)
	s.handle("GET", "/projects/:id/members/:user_id", s.getProjectMember)
	s.handle("POST", "/projects/:id/members", s.addProjectMember)
	s.handle("PUT", "/projects/:id/members/:user_id", s.updateProjectMember)
	s.handle("DELETE", "/projects/:id/members/:user_id", s.removeProjectMember)
	s.handle("GET", "/groups/:gid/members", s.listGroupMembers)
	s.handle("POST", "/groups/:gid/members", s.addGroupMember)
	s.handle("PUT", "/groups/:gid/members/:user_id", s.updateGroupMember)
	s.handle("DELETE", "/groups/:gid/members/:user_id", s.removeGroupMember)
}

func validLevel(l int) bool { return l == 10 || l == 20 || l == 30 || l == 40 || l == 50 }

// memberJSON renders a member; group members carry no email.
func (s *Server) memberJSON(u *user, level int, withEmail bool) map[string]any {
	m := map[string]any{"id": u.id, "username": u.username, "name": u.name, "state": u.state,
		"created_at": ts(u.createdAt), "access_level": level}
	if withEmail {
		m["email"] = u.email
	}
	return m
}

// memberParams reads user_id (from the path or the form) and access_level.
func (c *call) memberParams(needLevel bool) (u *user, level int, ok bool) {
	raw := c.params["user_id"]
	if raw == "" {
		if !c.has("user_id") {
			c.missing("user_id")
			return nil, 0, false
		}
		raw = c.str("user_id")
	}
	if u = c.s.findUser(raw); u == nil || !isDigits(raw) {
		c.notFound("User")
		return nil, 0, false
	}
	if !needLevel {
		return u, 0, true
	}
	level, present, ok := c.intParam("access_level")
	if !ok {
		return nil, 0, false
	}
	if !present {
		c.missing("access_level")
		return nil, 0, false
	}
	return u, level, true
}

func (s *Server) listProjectMembers(c *call) {
	p := c.project()
	if p == nil {
		return
	}
	q := strings.ToLower(c.str("query"))
	var out []*user
	for _, id := range sortedKeys(p.members) {
		if u := s.users[id]; u != nil && (q == "" || strings.Contains(strings.ToLower(u.username+" "+u.name), q)) {
			out = append(out, u)
		}
	}
	page(c, out, func(u *user) any { return s.memberJSON(u, p.members[u.id], true) })
}

func (s *Server) getProjectMember(c *call) {
	p := c.project()
	if p == nil {
		return
	}
	u, _, ok := c.memberParams(false)
	if !ok {
		return
	}
	if p.members[u.id] == 0 {
		c.notFound("Member")
		return
	}
	c.json(http.StatusOK, s.memberJSON(u, p.members[u.id], true))
}

// projectMemberChange reads and checks an add or update: master rights,
// the user and a valid access level.
func (s *Server) projectMemberChange(c *call) (*project, *user, int, bool) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 40) {
		return nil, nil, 0, false
	}
	u, level, ok := c.memberParams(true)
	if !ok {
		return nil, nil, 0, false
	}
	if !validLevel(level) {
		c.invalid(map[string]any{"access_level": []string{"is not included in the list"}})
		return nil, nil, 0, false
	}
	return p, u, level, true
}

// addProjectMember is idempotent: an existing member comes back unchanged.
func (s *Server) addProjectMember(c *call) {
	p, u, level, ok := s.projectMemberChange(c)
	if !ok {
		return
	}
	if p.members[u.id] == 0 {
		p.members[u.id] = level
		s.addEvent(p.id, u.id, actionJoined, "", 0, "", 0)
	}
	c.json(http.StatusCreated, s.memberJSON(u, p.members[u.id], true))
}

func (s *Server) updateProjectMember(c *call) {
	p, u, level, ok := s.projectMemberChange(c)
	if !ok {
		return
	}
	if p.members[u.id] == 0 {
		c.notFound("Member")
		return
	}
	p.members[u.id] = level
	c.json(http.StatusOK, s.memberJSON(u, level, true))
}

// removeProjectMember is idempotent, with the two body shapes of the notes.
func (s *Server) removeProjectMember(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 40) {
		return
	}
	u, _, ok := c.memberParams(false)
	if !ok {
		return
	}
	level := p.members[u.id]
	if level == 0 {
		c.json(http.StatusOK, map[string]any{"message": "Access revoked", "id": u.id})
		return
	}
	delete(p.members, u.id)
	c.json(http.StatusOK, s.memberJSON(u, level, true))
}

func (s *Server) listGroupMembers(c *call) {
	g := c.group()
	if g == nil {
		return
	}
	var out []*user
	for _, id := range sortedKeys(g.members) {
		if u := s.users[id]; u != nil {
			out = append(out, u)
		}
	}
	all(c, out, func(u *user) any { return s.memberJSON(u, g.members[u.id], false) })
}

func (s *Server) groupMemberChange(c *call, adding bool) (*group, *user, int, bool) {
	g := c.group()
	if g == nil || !c.requireGroupOwner(g) {
		return nil, nil, 0, false
	}
	u, level, ok := c.memberParams(true)
	if !ok {
		return nil, nil, 0, false
	}
	if !validLevel(level) {
		c.fail(http.StatusUnprocessableEntity, "Wrong access level")
		return nil, nil, 0, false
	}
	if exists := g.members[u.id] > 0; exists == adding {
		if adding {
			c.conflict("Already exists")
		} else {
			c.notFound("Member")
		}
		return nil, nil, 0, false
	}
	return g, u, level, true
}

func (s *Server) addGroupMember(c *call) {
	if g, u, level, ok := s.groupMemberChange(c, true); ok {
		g.members[u.id] = level
		c.json(http.StatusCreated, s.memberJSON(u, level, false))
	}
}

func (s *Server) updateGroupMember(c *call) {
	if g, u, level, ok := s.groupMemberChange(c, false); ok {
		g.members[u.id] = level
		c.json(http.StatusOK, s.memberJSON(u, level, false))
	}
}

func (s *Server) removeGroupMember(c *call) {
	g := c.group()
	if g == nil || !c.requireGroupOwner(g) {
		return
	}
	u, _, ok := c.memberParams(false)
	if !ok {
		return
	}
	if g.members[u.id] == 0 {
		c.notFound("Member")
		return
	}
	level := g.members[u.id]
	delete(g.members, u.id)
	c.json(http.StatusOK, s.memberJSON(u, level, false))
}
