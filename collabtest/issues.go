package collabtest

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

type issue struct {
	id, iid, projectID        int
	title, description, state string // state: opened or closed
	createdAt, updatedAt      time.Time
	labels                    []string
	milestoneID, assigneeID   int
	authorID                  int
	dueDate                   string
	subscribers               map[int]bool
	deleted                   bool // soft delete
}

// AddIssue seeds an open issue and returns its id.
func (s *Server) AddIssue(projectID, authorID int, title string, labels ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	is := &issue{
		id: s.newID(), iid: s.nextIssueIID(projectID), projectID: projectID, title: title, state: "opened",
		createdAt: now, updatedAt: now, labels: append([]string{}, labels...), authorID: authorID,
		subscribers: map[int]bool{authorID: true},
	}
	s.issues[is.id] = is
	s.addEvent(projectID, authorID, actionOpened, "Issue", is.id, title, 0)
	return is.id
}

func (s *Server) issueRoutes() {
	s.handle("GET", "/issues", s.listMyIssues)
	s.handle("GET", "/projects/:id/issues", s.listIssues)
	s.handle("POST", "/projects/:id/issues", s.createIssue)
	s.handle("GET", "/projects/:id/issues/:issue_id", s.issueHandler(s.getIssue))
	s.handle("PUT", "/projects/:id/issues/:issue_id", s.issueHandler(s.updateIssue))
	s.handle("DELETE", "/projects/:id/issues/:issue_id", s.issueHandler(s.deleteIssue))
	s.handle("POST", "/projects/:id/issues/:issue_id/move", s.issueHandler(s.moveIssue))
	s.handle("POST", "/projects/:id/issues/:issue_id/subscription", s.issueHandler(s.subscribeIssue(true)))
	s.handle("DELETE", "/projects/:id/issues/:issue_id/subscription", s.issueHandler(s.subscribeIssue(false)))
}

// issueHandler resolves the project and :issue_id before calling h.
func (s *Server) issueHandler(h func(*call, *project, *issue)) func(*call) {
	return func(c *call) {
		if p := c.project(); p != nil {
			if is := c.projectIssue(p); is != nil {
				h(c, p, is)
			}
		}
	}
}

// issueJSON renders an issue for caller u. Move and subscribe responses
// leave out user_notes_count, as the contract shows.
func (s *Server) issueJSON(is *issue, u *user, withNotes bool) map[string]any {
	up, down := s.votes("Issue", is.id)
	m := map[string]any{
		"id": is.id, "iid": is.iid, "project_id": is.projectID, "title": is.title, "description": orNil(is.description),
		"state": is.state, "created_at": ts(is.createdAt), "updated_at": ts(is.updatedAt), "labels": is.labels,
		"milestone": s.milestoneJSON(s.milestones[is.milestoneID]), "assignee": s.userJSON(is.assigneeID),
		"author": s.userJSON(is.authorID), "subscribed": u != nil && is.subscribers[u.id],
		"upvotes": up, "downvotes": down, "due_date": orNil(is.dueDate),
	}
	if withNotes {
		m["user_notes_count"] = s.countNotes("Issue", is.id)
	}
	return m
}

// votes counts thumbs on an awardable.
func (s *Server) votes(kind string, id int) (up, down int) {
	for _, a := range s.awards {
		if a.awardableType == kind && a.awardableID == id {
			switch a.name {
			case "thumbsup":
				up++
			case "thumbsdown":
				down++
			}
		}
	}
	return up, down
}

func (s *Server) countNotes(kind string, id int) int {
	n := 0
	for _, nt := range s.notes {
		if nt.noteableType == kind && nt.noteableID == id && !nt.system {
			n++
		}
	}
	return n
}

// milestoneJSON renders an embedded milestone, or null.
func (s *Server) milestoneJSON(ms *milestone) any {
	if ms == nil {
		return nil
	}
	return map[string]any{
		"id": ms.id, "iid": ms.iid, "project_id": ms.projectID, "title": ms.title, "description": ms.description,
		"state": ms.state, "due_date": orNil(ms.dueDate), "created_at": ts(ms.createdAt), "updated_at": ts(ms.updatedAt),
	}
}

// filterIssues applies iid, state, labels, milestone, order_by and sort.
func (s *Server) filterIssues(c *call, in []*issue) ([]*issue, bool) {
	iid, hasIID, ok := c.intParam("iid")
	if !ok {
		return nil, false
	}
	state := c.str("state")
	if state != "" && state != "opened" && state != "closed" && state != "all" {
		c.invalid(map[string]any{"state": []string{"does not have a valid value"}})
		return nil, false
	}
	labels := c.listParam("labels")
	var out []*issue
	for _, is := range in {
		if is.deleted || (hasIID && is.iid != iid) || (state != "" && state != "all" && is.state != state) {
			continue
		}
		if c.has("milestone") {
			ms := s.milestones[is.milestoneID]
			if ms == nil || ms.title != c.str("milestone") {
				continue
			}
		}
		if !containsAll(is.labels, labels) {
			continue
		}
		out = append(out, is)
	}
	ok = orderByTime(c, out, func(is *issue) time.Time { return is.createdAt }, func(is *issue) time.Time { return is.updatedAt },
		func(is *issue) int { return is.id })
	return out, ok
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func (s *Server) listMyIssues(c *call) {
	var mine []*issue
	for _, is := range s.issues {
		if p := s.projects[is.projectID]; is.authorID == c.user.id && p != nil && s.canSee(c.user, p) {
			mine = append(mine, is)
		}
	}
	if out, ok := s.filterIssues(c, mine); ok {
		page(c, out, func(is *issue) any { return s.issueJSON(is, c.user, true) })
	}
}

func (s *Server) listIssues(c *call) {
	p := c.project()
	if p == nil {
		return
	}
	var in []*issue
	for _, is := range s.issues {
		if is.projectID == p.id {
			in = append(in, is)
		}
	}
	if out, ok := s.filterIssues(c, in); ok {
		page(c, out, func(is *issue) any { return s.issueJSON(is, c.user, true) })
	}
}

// projectIssue resolves :issue_id within p, answering "404 Issue Not Found".
func (c *call) projectIssue(p *project) *issue {
	id, ok := c.pathInt("issue_id")
	if !ok {
		return nil
	}
	is := c.s.issues[id]
	if is == nil || is.deleted || is.projectID != p.id {
		c.notFound("Issue")
		return nil
	}
	return is
}

func (s *Server) getIssue(c *call, _ *project, is *issue) {
	c.json(http.StatusOK, s.issueJSON(is, c.user, true))
}

// issueRefs reads assignee_id and milestone_id, which must exist in p.
func (s *Server) issueRefs(c *call, p *project, assignee, milestoneID *int) bool {
	a, present, ok := c.intParam("assignee_id")
	if !ok {
		return false
	}
	if present {
		if a != 0 && s.users[a] == nil {
			c.notFound("User")
			return false
		}
		*assignee = a
	}
	m, present, ok := c.intParam("milestone_id")
	if !ok {
		return false
	}
	if present {
		if ms := s.milestones[m]; m != 0 && (ms == nil || ms.projectID != p.id) {
			c.notFound("Milestone")
			return false
		}
		*milestoneID = m
	}
	return true
}

func (s *Server) createIssue(c *call) {
	p := c.project()
	// Anyone who can see an internal or public project may open issues in it.
	if p == nil || (p.visibility == 0 && !c.requireLevel(p, 10)) {
		return
	}
	title := strings.TrimSpace(c.str("title"))
	if title == "" {
		c.missing("title")
		return
	}
	created, backdated, ok := c.timeParam("created_at")
	if !ok {
		return
	}
	now := s.now()
	is := &issue{projectID: p.id, title: title, state: "opened", createdAt: now, updatedAt: now,
		labels: dedupe(c.listParam("labels")), authorID: c.user.id, subscribers: map[int]bool{c.user.id: true}}
	if backdated && s.isOwner(c.user, p) {
		is.createdAt, is.updatedAt = created, created
	}
	c.setStr("description", &is.description)
	if !s.issueRefs(c, p, &is.assigneeID, &is.milestoneID) {
		return
	}
	is.id, is.iid = s.newID(), s.nextIssueIID(p.id)
	s.issues[is.id] = is
	s.ensureLabels(p.id, is.labels)
	s.addEvent(p.id, c.user.id, actionOpened, "Issue", is.id, is.title, 0)
	c.json(http.StatusCreated, s.issueJSON(is, c.user, true))
}

func dedupe(in []string) []string {
	out := []string{}
	for _, v := range in {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// ensureLabels creates labels a request names that the project lacks, as
// the server does when an issue or merge request is labelled.
func (s *Server) ensureLabels(projectID int, names []string) {
	for _, name := range names {
		if s.findLabel(projectID, name) == nil {
			now := s.now()
			l := &label{id: s.newID(), projectID: projectID, name: name, color: "#428BCA", subscribers: map[int]bool{}, createdAt: now, updatedAt: now}
			s.labels[l.id] = l
		}
	}
}

// findLabel finds a project's label by name.
func (s *Server) findLabel(projectID int, name string) *label {
	for _, l := range s.labels {
		if l.projectID == projectID && l.name == name {
			return l
		}
	}
	return nil
}

func (s *Server) updateIssue(c *call, p *project, is *issue) {
	if is.authorID != c.user.id && !c.requireLevel(p, 20) {
		return
	}
	if c.has("title") && strings.TrimSpace(c.str("title")) == "" {
		c.invalid(map[string]any{"title": []string{"can't be blank"}})
		return
	}
	event := c.str("state_event")
	if event != "" && event != "close" && event != "reopen" {
		c.invalid(map[string]any{"state_event": []string{"does not have a valid value"}})
		return
	}
	updated, setUpdated, ok := c.timeParam("updated_at")
	if !ok || !s.issueRefs(c, p, &is.assigneeID, &is.milestoneID) {
		return
	}
	c.setStr("title", &is.title)
	c.setStr("description", &is.description)
	if c.has("labels") {
		is.labels = dedupe(c.listParam("labels"))
		s.ensureLabels(p.id, is.labels)
	}
	switch {
	case event == "close" && is.state == "opened":
		is.state = "closed"
		s.addEvent(p.id, c.user.id, actionClosed, "Issue", is.id, is.title, 0)
	case event == "reopen" && is.state == "closed":
		is.state = "opened"
		s.addEvent(p.id, c.user.id, actionOpened, "Issue", is.id, is.title, 0)
	}
	is.updatedAt = s.now()
	if setUpdated && s.isOwner(c.user, p) {
		is.updatedAt = updated
	}
	c.json(http.StatusOK, s.issueJSON(is, c.user, true))
}

// deleteIssue is admin or owner only and soft; anyone else gets 404.
func (s *Server) deleteIssue(c *call, p *project, is *issue) {
	if !s.isOwner(c.user, p) {
		c.notFound("Issue")
		return
	}
	is.deleted = true
	c.json(http.StatusOK, s.issueJSON(is, c.user, true))
}

// moveIssue copies the issue into the target, closes the original, and
// matches labels and the milestone by name in the target (labels the target
// lacks are dropped).
func (s *Server) moveIssue(c *call, p *project, is *issue) {
	to, present, ok := c.intParam("to_project_id")
	if !ok {
		return
	}
	if !present {
		c.missing("to_project_id")
		return
	}
	target := s.projects[to]
	if target == nil || !s.canSee(c.user, target) {
		c.notFound("Project")
		return
	}
	if target.id == p.id {
		c.badRequest("Cannot move issue to project it originates from!")
		return
	}
	if s.accessLevel(c.user, target) < 20 && !c.user.admin {
		c.badRequest("Cannot move issue due to insufficient permissions!")
		return
	}
	now := s.now()
	moved := &issue{id: s.newID(), iid: s.nextIssueIID(target.id), projectID: target.id, title: is.title, description: is.description,
		state: "opened", createdAt: now, updatedAt: now, labels: []string{}, authorID: is.authorID, assigneeID: is.assigneeID,
		dueDate: is.dueDate, subscribers: map[int]bool{}}
	for u := range is.subscribers {
		moved.subscribers[u] = true
	}
	for _, name := range is.labels {
		if s.findLabel(target.id, name) != nil {
			moved.labels = append(moved.labels, name)
		}
	}
	if ms := s.milestones[is.milestoneID]; ms != nil {
		for _, m := range s.milestones {
			if m.projectID == target.id && m.title == ms.title {
				moved.milestoneID = m.id
			}
		}
	}
	s.issues[moved.id] = moved
	is.state, is.updatedAt = "closed", now
	s.addEvent(p.id, c.user.id, actionClosed, "Issue", is.id, is.title, 0)
	s.addEvent(target.id, c.user.id, actionOpened, "Issue", moved.id, moved.title, 0)
	c.json(http.StatusCreated, s.issueJSON(moved, c.user, false))
}

func (s *Server) subscribeIssue(on bool) func(*call, *project, *issue) {
	return func(c *call, _ *project, is *issue) {
		c.toggleCaller(is.subscribers, on, func() any { return s.issueJSON(is, c.user, false) })
	}
}
