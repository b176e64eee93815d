package collabtest

import (
	"net/http"
	"time"
)

type milestone struct {
	id, iid, projectID        int
	title, description, state string // active or closed
	dueDate                   string // YYYY-MM-DD or ""
	createdAt, updatedAt      time.Time
}

func (s *Server) milestoneRoutes() {
	s.api("GET /projects/{id}/milestones", rule{}, s.listMilestones)
	s.api("POST /projects/{id}/milestones", rule{level: levelDeveloper}, s.createMilestone)
	s.api("GET /projects/{id}/milestones/{milestone_id}", rule{}, s.getMilestone)
	s.api("PUT /projects/{id}/milestones/{milestone_id}", rule{level: levelDeveloper}, s.updateMilestone)
	s.api("GET /projects/{id}/milestones/{milestone_id}/issues", rule{}, s.listMilestoneIssues)
}

// loadMilestone resolves {milestone_id} within the project.
func (c *call) loadMilestone() error {
	return loadRecord(c, "milestone_id", "Milestone", c.s.milestones,
		func(ms *milestone) bool { return ms.projectID == c.project.id }, &c.milestone)
}

// milestoneJSON renders a milestone, or null.
func (s *Server) milestoneJSON(ms *milestone) any {
	if ms == nil {
		return nil
	}
	return reply(s.milestoneRecord(ms))
}

func (s *Server) listMilestones(c *call) error {
	iid, hasIID, err := c.intParam("iid")
	if err != nil {
		return err
	}
	state := c.str("state")
	var out []*milestone
	for _, id := range sortedKeys(s.milestones) {
		ms := s.milestones[id]
		if ms.projectID == c.project.id && (!hasIID || ms.iid == iid) && (state == "" || ms.state == state) {
			out = append(out, ms)
		}
	}
	return page(c, out, s.milestoneJSON)
}

func (s *Server) getMilestone(c *call) error {
	return c.json(http.StatusOK, s.milestoneJSON(c.milestone))
}

// dueDate validates an optional YYYY-MM-DD parameter into *dst.
func (c *call) dueDate(dst *string) error {
	if !c.has("due_date") {
		return nil
	}
	v := c.str("due_date")
	if _, err := time.Parse("2006-01-02", v); err != nil {
		return errInvalid("due_date", "is invalid")
	}
	*dst = v
	return nil
}

func (s *Server) createMilestone(c *call) error {
	p := c.project
	title, _, err := c.nameParam("title", "title", true)
	if err != nil {
		return err
	}
	now := s.now()
	ms := &milestone{projectID: p.id, title: title, state: "active", createdAt: now, updatedAt: now}
	c.setStr("description", &ms.description)
	if err := c.dueDate(&ms.dueDate); err != nil {
		return err
	}
	for _, other := range s.milestones {
		if other.projectID == p.id {
			ms.iid = max(ms.iid, other.iid)
			if other.title == title {
				return errInvalid("title", "has already been taken")
			}
		}
	}
	ms.id, ms.iid = s.newID(), ms.iid+1
	s.milestones[ms.id] = ms
	return c.json(http.StatusCreated, s.milestoneJSON(ms))
}

func (s *Server) updateMilestone(c *call) error {
	ms := c.milestone
	state := ms.state
	switch c.str("state_event") {
	case "":
	case "close":
		state = "closed"
	case "activate":
		state = "active"
	default:
		return errInvalid("state_event", "does not have a valid value")
	}
	title, hasTitle, err := c.nameParam("title", "title", false)
	if err != nil {
		return err
	}
	due := ms.dueDate
	if err := c.dueDate(&due); err != nil {
		return err
	}
	if hasTitle {
		ms.title = title
	}
	ms.state, ms.dueDate = state, due
	c.setStr("description", &ms.description)
	ms.updatedAt = s.now()
	return c.json(http.StatusOK, s.milestoneJSON(ms))
}

func (s *Server) listMilestoneIssues(c *call) error {
	var out []*issue
	for _, id := range sortedKeys(s.issues) {
		if is := s.issues[id]; is.milestoneID == c.milestone.id && !is.deleted {
			out = append(out, is)
		}
	}
	return page(c, out, func(is *issue) any { return s.issueJSON(is, c.user, true) })
}
