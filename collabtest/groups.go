package collabtest

import (
	"net/http"
	"strconv"
	"strings"
	"time"
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
	s.handle("GET", "/groups", s.listGroups)
	s.handle("POST", "/groups", s.createGroup)
	s.handle("GET", "/groups/:gid", s.getGroup)
	s.handle("PUT", "/groups/:gid", s.updateGroup)
	s.handle("DELETE", "/groups/:gid", s.deleteGroup)
	s.handle("GET", "/groups/:gid/projects", s.listGroupProjects)
	s.handle("POST", "/groups/:gid/projects/:project_id", s.transferProject)
}

// lookupGroup finds a group by id or path.
func (s *Server) lookupGroup(key string) *group {
	if isDigits(key) {
		id, _ := strconv.Atoi(key)
		return s.groups[id]
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

// group resolves :gid to a group the caller may see, or answers 404.
func (c *call) group() *group {
	g := c.s.lookupGroup(c.params["gid"])
	if g == nil || !c.s.canSeeGroup(c.user, g) {
		c.notFound("Group")
		return nil
	}
	return g
}

func (s *Server) groupJSON(g *group, withProjects bool, u *user) map[string]any {
	m := map[string]any{
		"id": g.id, "name": g.name, "path": g.path, "description": g.description, "visibility_level": g.visibility,
		"avatar_url": orNil(g.avatarURL), "web_url": s.URL + "/groups/" + g.path,
	}
	if withProjects {
		projects := []any{}
		for _, p := range s.groupProjects(g) {
			if s.canSee(u, p) {
				projects = append(projects, s.projectJSON(p, u))
			}
		}
		m["projects"] = projects
	}
	return m
}

func (s *Server) groupProjects(g *group) []*project {
	var out []*project
	for _, id := range sortedKeys(s.projects) {
		if p := s.projects[id]; p.groupID == g.id {
			out = append(out, p)
		}
	}
	return out
}

func (s *Server) listGroups(c *call) {
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
	page(c, out, func(g *group) any { return s.groupJSON(g, false, c.user) })
}

func (s *Server) getGroup(c *call) {
	if g := c.group(); g != nil {
		c.json(http.StatusOK, s.groupJSON(g, true, c.user))
	}
}

func (s *Server) createGroup(c *call) {
	if !c.user.admin && !c.user.canCreateGroup {
		c.forbidden()
		return
	}
	name, path := strings.TrimSpace(c.str("name")), strings.TrimSpace(c.str("path"))
	if name == "" {
		c.missing("name")
		return
	}
	if path == "" {
		c.missing("path")
		return
	}
	vis, ok := s.visibilityParam(c, 0)
	if !ok {
		return
	}
	if !validPath(path) {
		c.invalid(map[string]any{"path": []string{"can contain only letters, digits, '_', '-' and '.'"}})
		return
	}
	if s.lookupGroup(path) != nil || s.findUser(path) != nil {
		c.invalid(map[string]any{"path": []string{"has already been taken"}})
		return
	}
	g := &group{id: s.newID(), name: name, path: path, visibility: vis, members: map[int]int{c.user.id: 50}, createdAt: s.now()}
	c.setStr("description", &g.description)
	s.groups[g.id] = g
	c.json(http.StatusCreated, s.groupJSON(g, false, c.user))
}

// requireGroupOwner answers 403 unless the caller owns g or is an admin.
func (c *call) requireGroupOwner(g *group) bool {
	if c.user.admin || g.members[c.user.id] >= 50 {
		return true
	}
	c.forbidden()
	return false
}

func (s *Server) updateGroup(c *call) {
	g := c.group()
	if g == nil || !c.requireGroupOwner(g) {
		return
	}
	vis, ok := s.visibilityParam(c, g.visibility)
	if !ok {
		return
	}
	if c.has("path") {
		path := c.str("path")
		if !validPath(path) {
			c.invalid(map[string]any{"path": []string{"can contain only letters, digits, '_', '-' and '.'"}})
			return
		}
		if other := s.lookupGroup(path); other != nil && other != g {
			c.invalid(map[string]any{"path": []string{"has already been taken"}})
			return
		}
		g.path = path
	}
	if c.has("name") && strings.TrimSpace(c.str("name")) == "" {
		c.invalid(map[string]any{"name": []string{"can't be blank"}})
		return
	}
	c.setStr("name", &g.name)
	c.setStr("description", &g.description)
	g.visibility = vis
	c.json(http.StatusOK, s.groupJSON(g, true, c.user))
}

// deleteGroup removes the group with all its projects.
func (s *Server) deleteGroup(c *call) {
	g := c.group()
	if g == nil || !c.requireGroupOwner(g) {
		return
	}
	for _, p := range s.groupProjects(g) {
		s.removeProject(p.id)
	}
	for _, p := range s.projects {
		delete(p.sharedWith, g.id)
	}
	delete(s.groups, g.id)
	c.json(http.StatusOK, map[string]any{"message": "202 Accepted"})
}

func (s *Server) listGroupProjects(c *call) {
	g := c.group()
	if g == nil {
		return
	}
	var visible []*project
	for _, p := range s.groupProjects(g) {
		if s.canSee(c.user, p) {
			visible = append(visible, p)
		}
	}
	if out, ok := s.filterProjects(c, visible, false); ok {
		page(c, out, func(p *project) any { return s.projectJSON(p, c.user) })
	}
}

func (s *Server) transferProject(c *call) {
	if !c.requireAdmin() {
		return
	}
	g := c.group()
	if g == nil {
		return
	}
	id, ok := c.pathInt("project_id")
	if !ok {
		return
	}
	p := s.projects[id]
	if p == nil {
		c.notFound("Project")
		return
	}
	if s.pathTaken(0, g.id, p.path, p.id) {
		c.invalid(map[string]any{"path": []string{"has already been taken"}})
		return
	}
	p.groupID, p.ownerID = g.id, 0
	c.json(http.StatusCreated, s.groupJSON(g, true, c.user))
}

// AddGroup creates a group owned by ownerID and returns its id.
func (s *Server) AddGroup(ownerID int, name, path string, visibility int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := &group{id: s.newID(), name: name, path: path, visibility: visibility, members: map[int]int{ownerID: 50}, createdAt: s.now()}
	s.groups[g.id] = g
	return g.id
}
