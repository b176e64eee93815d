package collabtest

import (
	"net/http"
	"strings"
	"time"
)

type milestone struct {
	id, iid, projectID        int
	title, description, state string // active or closed
	dueDate                   string // YYYY-MM-DD or ""
	createdAt, updatedAt      time.Time
}

func (s *Server) milestoneRoutes() {
	s.handle("GET", "/projects/:id/milestones", s.listMilestones)
	s.handle("POST", "/projects/:id/milestones", s.createMilestone)
	s.handle("GET", "/projects/:id/milestones/:milestone_id", s.getMilestone)
	s.handle("PUT", "/projects/:id/milestones/:milestone_id", s.updateMilestone)
	s.handle("GET", "/projects/:id/milestones/:milestone_id/issues", s.listMilestoneIssues)
}

func (s *Server) listMilestones(c *call) {
	p := c.project()
	if p == nil {
		return
	}
	iid, hasIID, ok := c.intParam("iid")
	if !ok {
		return
	}
	state := c.str("state")
	var out []*milestone
	for _, id := range sortedKeys(s.milestones) {
		ms := s.milestones[id]
		if ms.projectID == p.id && (!hasIID || ms.iid == iid) && (state == "" || ms.state == state) {
			out = append(out, ms)
		}
	}
	page(c, out, s.milestoneJSON)
}

// projectMilestone resolves :milestone_id within p.
func (c *call) projectMilestone(p *project) *milestone {
	id, ok := c.pathInt("milestone_id")
	if !ok {
		return nil
	}
	ms := c.s.milestones[id]
	if ms == nil || ms.projectID != p.id {
		c.notFound("Milestone")
		return nil
	}
	return ms
}

func (s *Server) getMilestone(c *call) {
	if p := c.project(); p != nil {
		if ms := c.projectMilestone(p); ms != nil {
			c.json(http.StatusOK, s.milestoneJSON(ms))
		}
	}
}

// dueDate validates an optional YYYY-MM-DD parameter.
func (c *call) dueDate(dst *string) bool {
	if !c.has("due_date") {
		return true
	}
	v := c.str("due_date")
	if v != "" {
		if _, err := time.Parse("2006-01-02", v); err != nil {
			c.invalid(map[string]any{"due_date": []string{"is invalid"}})
			return false
		}
	}
	*dst = v
	return true
}

func (s *Server) createMilestone(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 30) {
		return
	}
	title := strings.TrimSpace(c.str("title"))
	if title == "" {
		c.missing("title")
		return
	}
	now := s.now()
	ms := &milestone{projectID: p.id, title: title, state: "active", createdAt: now, updatedAt: now}
	c.setStr("description", &ms.description)
	if !c.dueDate(&ms.dueDate) {
		return
	}
	for _, other := range s.milestones {
		if other.projectID == p.id {
			ms.iid = max(ms.iid, other.iid)
			if other.title == title {
				c.invalid(map[string]any{"title": []string{"has already been taken"}})
				return
			}
		}
	}
	ms.id, ms.iid = s.newID(), ms.iid+1
	s.milestones[ms.id] = ms
	c.json(http.StatusCreated, s.milestoneJSON(ms))
}

func (s *Server) updateMilestone(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 30) {
		return
	}
	ms := c.projectMilestone(p)
	if ms == nil {
		return
	}
	switch c.str("state_event") {
	case "":
	case "close":
		ms.state = "closed"
	case "activate":
		ms.state = "active"
	default:
		c.invalid(map[string]any{"state_event": []string{"does not have a valid value"}})
		return
	}
	if !c.dueDate(&ms.dueDate) {
		return
	}
	if c.has("title") && strings.TrimSpace(c.str("title")) != "" {
		ms.title = c.str("title")
	}
	c.setStr("description", &ms.description)
	ms.updatedAt = s.now()
	c.json(http.StatusOK, s.milestoneJSON(ms))
}

func (s *Server) listMilestoneIssues(c *call) {
	p := c.project()
	if p == nil {
		return
	}
	ms := c.projectMilestone(p)
	if ms == nil {
		return
	}
	var out []*issue
	for _, id := range sortedKeys(s.issues) {
		if is := s.issues[id]; is.milestoneID == ms.id && !is.deleted {
			out = append(out, is)
		}
	}
	page(c, out, func(is *issue) any { return s.issueJSON(is, c.user, true) })
}
