package collabtest

import (
	"net/http"
	"strings"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/serverform"
)

type group struct {
	id                      int
	name, path, description string
	visibility              int
	avatarURL               string
	members                 map[int]int // user id -> access level
	createdAt               time.Time
}

func (s *Server) groupRoutes() {
	s.api("GET /groups", rule{}, s.listGroups)
	s.api("POST /groups", rule{}, s.createGroup)
	s.api("GET /groups/{gid}", rule{}, s.getGroup)
	s.api("PUT /groups/{gid}", rule{groupOwner: true}, s.updateGroup)
	s.api("DELETE /groups/{gid}", rule{groupOwner: true}, s.deleteGroup)
	s.api("GET /groups/{gid}/projects", rule{}, s.listGroupProjects)
	s.api("POST /groups/{gid}/projects/{project_id}", rule{admin: true}, s.transferProject)
}

// AddGroup creates a group owned by ownerID and returns its id. An unknown
// owner, a bad or taken path or a bad visibility is a mistake (see Err) and
// returns 0.
//
// Deprecated: Use Seed.Group, which takes the collab package's types and
// returns the API's record. This helper goes in the next minor release.
func (s *Server) AddGroup(ownerID int, name, path string, visibility int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.users[ownerID] == nil:
		s.misuse("AddGroup: no user %d", ownerID)
	case name == "" || !validPath(path) || s.lookupGroup(path) != nil || s.findUser(path) != nil:
		s.misuse("AddGroup: blank name, or path %q not valid or taken", path)
	case !validVisibility(visibility):
		s.misuse("AddGroup: visibility %d is not 0, 10 or 20 (private, internal or public)", visibility)
	default:
		g := &group{id: s.newID(), name: name, path: path, visibility: visibility, members: map[int]int{ownerID: levelOwner}, createdAt: s.now()}
		s.groups[g.id] = g
		return g.id
	}
	return 0
}

// AddGroupMember gives userID a level in a group. An unknown group or
// user, or a level other than the five, is a mistake (see Err).
//
// Deprecated: Use Seed.GroupMember, which takes the collab package's types and
// returns the API's record. This helper goes in the next minor release.
func (s *Server) AddGroupMember(groupID, userID, level int) {
	seedMember(s, "AddGroupMember", "group", s.groups, groupID, func(g *group) map[int]int { return g.members }, userID, level)
}

// AddGroupProject creates a project in a group, like AddProject, and
// returns its id (0 and a mistake, see Err, for a bad argument).
//
// Deprecated: Use Seed.GroupProject, which takes the collab package's types and
// returns the API's record. This helper goes in the next minor release.
func (s *Server) AddGroupProject(groupID, creatorID int, name string, visibility int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.groups[groupID] == nil || s.users[creatorID] == nil:
		s.misuse("AddGroupProject: no group %d or no user %d", groupID, creatorID)
	case !validPath(slug(name)) || s.pathTaken(0, groupID, slug(name), 0):
		s.misuse("AddGroupProject: name %q makes no valid path or is taken", name)
	case !validVisibility(visibility):
		s.misuse("AddGroupProject: visibility %d is not 0, 10 or 20 (private, internal or public)", visibility)
	default:
		return s.createProject(creatorID, groupID, name, int(visibility)).id
	}
	return 0
}

// lookupGroup finds a group by id or path.
func (s *Server) lookupGroup(key string) *group {
	if isDigits(key) {
		return s.groups[atoi(key)]
	}
	for _, g := range s.groups {
		if strings.EqualFold(g.path, key) {
			return g
		}
	}
	return nil
}

// canSeeGroup: members and admins see any group; everyone signed in sees
// internal and public ones.
func (s *Server) canSeeGroup(u *user, g *group) bool {
	return u.admin || g.visibility >= 10 || g.members[u.id] > 0
}

// groupJSON renders g, with the projects u may see when withProjects. Each
// project is rendered for its own variant (see projectJSON).
func (s *Server) groupJSON(g *group, withProjects bool, u *user) any {
	a := reply(&collab.Group{ID: g.id, Name: g.name, Path: g.path, Description: &g.description,
		VisibilityLevel: collab.VisibilityLevel(g.visibility), AvatarURL: serverform.Str(g.avatarURL),
		WebURL: s.URL + "/groups/" + g.path}, groupOmit...)
	if withProjects {
		projects := []any{}
		for _, p := range s.groupProjects(g) {
			if s.canSee(u, p) {
				projects = append(projects, s.projectJSON(p, u))
			}
		}
		a.clear = map[string]any{"projects": projects}
	}
	return a
}

// groupOmit are the keys of a collab.Group that group answers leave out:
// those of the namespace variant, and the projects (see groupJSON).
var groupOmit = []string{"owner_id", "created_at", "updated_at", "avatar", "share_with_group_lock",
	"request_access_enabled", "projects", "shared_projects"}

func (s *Server) groupProjects(g *group) []*project {
	var out []*project
	for _, id := range sortedKeys(s.projects) {
		if p := s.projects[id]; p.groupID == g.id {
			out = append(out, p)
		}
	}
	return out
}

func (s *Server) listGroups(c *call) error {
	search := strings.ToLower(c.str("search"))
	var out []*group
	for _, id := range sortedKeys(s.groups) {
		g := s.groups[id]
		if (!c.user.admin && g.members[c.user.id] == 0) ||
			(search != "" && !strings.Contains(strings.ToLower(g.name+" "+g.path), search)) {
			continue
		}
		out = append(out, g)
	}
	return page(c, out, func(g *group) any { return s.groupJSON(g, false, c.user) })
}

func (s *Server) getGroup(c *call) error {
	return c.json(http.StatusOK, s.groupJSON(c.group, true, c.user))
}

func (s *Server) createGroup(c *call) error {
	if !c.user.admin && !c.user.canCreateGroup {
		return errForbidden
	}
	name, _, err := c.nameParam("name", "name", true)
	if err != nil {
		return err
	}
	path := strings.TrimSpace(c.str("path"))
	if path == "" {
		return errMissing("path")
	}
	vis, err := s.visibilityParam(c, 0)
	if err != nil {
		return err
	}
	if !validPath(path) {
		return errBadPath
	}
	if s.lookupGroup(path) != nil || s.findUser(path) != nil {
		return errInvalid("path", "has already been taken")
	}
	g := &group{id: s.newID(), name: name, path: path, visibility: vis, members: map[int]int{c.user.id: levelOwner}, createdAt: s.now()}
	c.setStr("description", &g.description)
	s.groups[g.id] = g
	return c.json(http.StatusCreated, s.groupJSON(g, false, c.user))
}

func (s *Server) updateGroup(c *call) error {
	g := c.group
	np, err := s.namedParams(c, g.visibility, func(path string) bool {
		other := s.lookupGroup(path)
		return other != nil && other != g
	})
	if err != nil {
		return err
	}
	np.apply(&g.name, &g.path, &g.visibility)
	c.setStr("description", &g.description)
	return c.json(http.StatusOK, s.groupJSON(g, true, c.user))
}

// deleteGroup removes the group with all its projects.
func (s *Server) deleteGroup(c *call) error {
	g := c.group
	for _, p := range s.groupProjects(g) {
		s.removeProject(p.id)
	}
	for _, p := range s.projects {
		delete(p.sharedWith, g.id)
	}
	delete(s.groups, g.id)
	return c.json(http.StatusOK, map[string]any{"message": "202 Accepted"})
}

func (s *Server) listGroupProjects(c *call) error {
	var visible []*project
	for _, p := range s.groupProjects(c.group) {
		if s.canSee(c.user, p) {
			visible = append(visible, p)
		}
	}
	out, err := s.filterProjects(c, visible, false)
	if err != nil {
		return err
	}
	return page(c, out, func(p *project) any { return s.projectJSON(p, c.user) })
}

func (s *Server) transferProject(c *call) error {
	g := c.group
	id, err := c.pathID("project_id")
	if err != nil {
		return err
	}
	p := s.projects[id]
	if p == nil {
		return errNotFound("Project")
	}
	if s.pathTaken(0, g.id, p.path, p.id) {
		return errInvalid("path", "has already been taken")
	}
	p.groupID, p.ownerID = g.id, 0
	return c.json(http.StatusCreated, s.groupJSON(g, true, c.user))
}
