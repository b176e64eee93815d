package collabtest

import (
	"net/http"
	"time"
)

// issue is an issue: the common ticket and a due date.
type issue struct {
	ticket
	dueDate string
}

func (s *Server) issueRoutes() {
	s.api("GET /issues", rule{}, s.listMyIssues)
	s.api("GET /projects/{id}/issues", rule{}, s.listIssues)
	s.api("POST /projects/{id}/issues", rule{}, s.createIssue)
	s.api("GET /projects/{id}/issues/{issue_id}", rule{}, s.getIssue)
	s.api("PUT /projects/{id}/issues/{issue_id}", rule{}, s.updateIssue)
	s.api("DELETE /projects/{id}/issues/{issue_id}", rule{}, s.deleteTicket)
	s.api("POST /projects/{id}/issues/{issue_id}/move", rule{}, s.moveIssue)
	s.api("POST /projects/{id}/issues/{issue_id}/subscription", rule{}, s.subscribe(true))
	s.api("DELETE /projects/{id}/issues/{issue_id}/subscription", rule{}, s.subscribe(false))
}

// AddIssue seeds an open issue and returns its id. A label the project
// lacks is created, as the server does when an issue is labelled. An
// unknown project or author, or a blank title, is a mistake (see Err) and
// returns 0.
//
// Deprecated: Use Seed.Issue, which takes the collab package's types and
// returns the API's record. This helper goes in the next minor release.
func (s *Server) AddIssue(projectID, authorID int, title string, labels ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.projects[projectID] == nil || s.users[authorID] == nil || title == "" {
		s.misuse("AddIssue: no project %d, no user %d, or a blank title", projectID, authorID)
		return 0
	}
	is := &issue{ticket: s.newTicket("Issue", projectID, authorID, title)}
	is.labels = dedupe(labels)
	s.ensureLabels(projectID, is.labels)
	insertTicket(s, s.issues, is, authorID, s.emitIssue)
	return is.id
}

// loadIssue resolves {issue_id} within the project: "404 Issue Not Found".
func (c *call) loadIssue() error { return loadTicket(c, "issue_id", "Issue", c.s.issues, &c.issue) }

// issueJSON renders an issue for caller u. Move and subscribe answers
// leave out user_notes_count.
func (s *Server) issueJSON(is *issue, u *user, withNotes bool) any {
	omit := ticketOmit
	if !withNotes {
		omit = append(omit, "user_notes_count")
	}
	return reply(s.issueRecord(is, u), omit...)
}

// filterIssues applies iid, state, labels, milestone, order_by and sort.
func (s *Server) filterIssues(c *call, in []*issue) ([]*issue, error) {
	iid, hasIID, err := c.intParam("iid")
	if err != nil {
		return nil, err
	}
	state := c.str("state")
	if state != "" && state != "opened" && state != "closed" && state != "all" {
		return nil, errInvalid("state", "does not have a valid value")
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
	err = orderByTime(c, out, func(is *issue) time.Time { return is.createdAt }, func(is *issue) time.Time { return is.updatedAt },
		func(is *issue) int { return is.id })
	return out, err
}

func (s *Server) listMyIssues(c *call) error {
	var mine []*issue
	for _, is := range s.issues {
		if p := s.projects[is.projectID]; is.authorID == c.user.id && p != nil && s.canSee(c.user, p) {
			mine = append(mine, is)
		}
	}
	return s.pageIssues(c, mine)
}

func (s *Server) listIssues(c *call) error {
	var in []*issue
	for _, is := range s.issues {
		if is.projectID == c.project.id {
			in = append(in, is)
		}
	}
	return s.pageIssues(c, in)
}

func (s *Server) pageIssues(c *call, in []*issue) error {
	out, err := s.filterIssues(c, in)
	if err != nil {
		return err
	}
	return page(c, out, func(is *issue) any { return s.issueJSON(is, c.user, true) })
}

func (s *Server) getIssue(c *call) error {
	return c.json(http.StatusOK, s.issueJSON(c.issue, c.user, true))
}

func (s *Server) createIssue(c *call) error {
	p := c.project
	// Anyone who can see an internal or public project may open issues in it.
	if p.visibility == 0 && !c.user.admin && s.accessLevel(c.user, p) < levelGuest {
		return errForbidden
	}
	title, _, err := c.nameParam("title", "title", true)
	if err != nil {
		return err
	}
	created, backdated, err := c.timeParam("created_at")
	if err != nil {
		return err
	}
	is := &issue{ticket: s.newTicket("Issue", p.id, c.user.id, title)}
	if backdated && s.isOwner(c.user, p) {
		is.createdAt, is.updatedAt = created, created
	}
	if err := s.ticketParams(c, &is.ticket); err != nil {
		return err
	}
	insertTicket(s, s.issues, is, c.user.id, s.emitIssue)
	return c.json(http.StatusCreated, s.issueJSON(is, c.user, true))
}

func (s *Server) updateIssue(c *call) error {
	p, is := c.project, c.issue
	if is.authorID != c.user.id && !c.user.admin && s.accessLevel(c.user, p) < levelReporter {
		return errForbidden
	}
	event := c.str("state_event")
	if event != "" && event != "close" && event != "reopen" {
		return errInvalid("state_event", "does not have a valid value")
	}
	updated, setUpdated, err := c.timeParam("updated_at")
	if err != nil {
		return err
	}
	if err := s.ticketParams(c, &is.ticket); err != nil {
		return err
	}
	switch {
	case event == "close" && is.state == "opened":
		s.setTicketState(&is.ticket, "closed", c.user.id)
	case event == "reopen" && is.state == "closed":
		s.setTicketState(&is.ticket, "opened", c.user.id)
	}
	is.updatedAt = s.now()
	if setUpdated && s.isOwner(c.user, p) {
		is.updatedAt = updated
	}
	if c.ticketEdited() {
		s.emitIssue(is, c.user.id, "update")
	}
	return c.json(http.StatusOK, s.issueJSON(is, c.user, true))
}

// moveIssue copies the issue into the target, closes the original, and
// matches labels and the milestone by name in the target (labels the target
// lacks are dropped).
func (s *Server) moveIssue(c *call) error {
	p, is := c.project, c.issue
	to, err := c.requiredInt("to_project_id")
	if err != nil {
		return err
	}
	target := s.projects[to]
	if target == nil || !s.canSee(c.user, target) {
		return errNotFound("Project")
	}
	if target.id == p.id {
		return errBadRequest("Cannot move issue to project it originates from!")
	}
	if s.accessLevel(c.user, target) < levelReporter && !c.user.admin {
		return errBadRequest("Cannot move issue due to insufficient permissions!")
	}
	moved := &issue{ticket: s.newTicket("Issue", target.id, is.authorID, is.title), dueDate: is.dueDate}
	moved.description, moved.assigneeID = is.description, is.assigneeID
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
	s.setTicketState(&is.ticket, "closed", c.user.id)
	insertTicket(s, s.issues, moved, c.user.id, s.emitIssue)
	return c.json(http.StatusCreated, s.issueJSON(moved, c.user, false))
}
