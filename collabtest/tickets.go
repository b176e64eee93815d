package collabtest

import (
	"net/http"
	"slices"
	"time"
)

// ticket is what issues and merge requests have in common: the number
// within the project (iid), title, labels, milestone, assignee,
// subscribers, and through kind their notes and award emoji.
type ticket struct {
	kind                      string // "Issue" or "MergeRequest": the noteable and awardable type
	id, iid, projectID        int
	title, description, state string // issues: opened or closed; merge requests also merged, reopened
	createdAt, updatedAt      time.Time
	labels                    []string
	milestoneID, assigneeID   int
	authorID                  int
	subscribers               map[int]bool
	deleted                   bool // soft delete
}

// newTicket starts a ticket of kind in project p by author, without id.
func (s *Server) newTicket(kind string, projectID, authorID int, title string) ticket {
	now := s.now()
	return ticket{kind: kind, projectID: projectID, title: title, state: "opened", createdAt: now, updatedAt: now,
		labels: []string{}, authorID: authorID, subscribers: map[int]bool{authorID: true}}
}

// nextIID numbers issues, and apart from them merge requests, within a project.
func (s *Server) nextIID(kind string, projectID int) int {
	n := 0
	for _, t := range s.tickets(kind) {
		if t.projectID == projectID {
			n = max(n, t.iid)
		}
	}
	return n + 1
}

// tickets lists the common part of every issue or merge request.
func (s *Server) tickets(kind string) []*ticket {
	var out []*ticket
	if kind == "Issue" {
		for _, is := range s.issues {
			out = append(out, &is.ticket)
		}
		return out
	}
	for _, mr := range s.mergeRequests {
		out = append(out, &mr.ticket)
	}
	return out
}

// common is the ticket of an issue or merge request.
func (t *ticket) common() *ticket { return t }

// loadTicket resolves the issue or merge request the path value name
// holds, not deleted and within the call's project, into dst, and makes it
// the call's ticket: "404 <thing> Not Found" otherwise.
func loadTicket[T interface{ common() *ticket }](c *call, name, thing string, records map[int]T, dst *T) error {
	belongs := func(r T) bool { t := r.common(); return !t.deleted && t.projectID == c.project.id }
	if err := loadRecord(c, name, thing, records, belongs, dst); err != nil {
		return err
	}
	c.ticket = (*dst).common()
	return nil
}

// insertTicket gives a new issue or merge request r its id and iid, stores
// it in records, and records that by opened it: a project event, and the
// webhook emit fires.
func insertTicket[T interface{ common() *ticket }](s *Server, records map[int]T, r T, by int, emit func(T, int, string)) {
	t := r.common()
	t.id, t.iid = s.newID(), s.nextIID(t.kind, t.projectID)
	s.addEvent(t.projectID, by, actionOpened, t.kind, t.id, t.title, 0)
	records[t.id] = r
	emit(r, by, "open")
}

// ticketParams applies title, description, labels, assignee_id and
// milestone_id, each only when sent; every value is checked before any is
// stored.
func (s *Server) ticketParams(c *call, t *ticket) error {
	title, hasTitle, err := c.nameParam("title", "title", false)
	if err != nil {
		return err
	}
	assignee, hasAssignee, err := c.intParam("assignee_id")
	if err != nil {
		return err
	}
	if hasAssignee && assignee != 0 && s.users[assignee] == nil {
		return errNotFound("User")
	}
	ms, hasMilestone, err := c.intParam("milestone_id")
	if err != nil {
		return err
	}
	if m := s.milestones[ms]; hasMilestone && ms != 0 && (m == nil || m.projectID != t.projectID) {
		return errNotFound("Milestone")
	}
	if hasTitle {
		t.title = title
	}
	if hasAssignee {
		t.assigneeID = assignee
	}
	if hasMilestone {
		t.milestoneID = ms
	}
	c.setStr("description", &t.description)
	if c.has("labels") {
		t.labels = dedupe(c.listParam("labels"))
		s.ensureLabels(t.projectID, t.labels)
	}
	return nil
}

// setTicketState moves an issue or merge request to state ("closed",
// "opened" or "reopened") and records the event. Merging is doMerge.
func (s *Server) setTicketState(t *ticket, state string, by int) {
	t.state, t.updatedAt = state, s.now()
	action := actionOpened
	if state == "closed" {
		action = actionClosed
	}
	s.addEvent(t.projectID, by, action, t.kind, t.id, t.title, 0)
	s.emitTicketState(t, by)
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

// countNotes counts the user (not system) notes on a noteable.
func (s *Server) countNotes(kind string, id int) int {
	n := 0
	for _, nt := range s.notes {
		if nt.noteableType == kind && nt.noteableID == id && !nt.system {
			n++
		}
	}
	return n
}

// subscribe serves POST and DELETE .../subscription on an issue or merge
// request: 201 or 200 with the record, 304 when nothing changes.
func (s *Server) subscribe(on bool) handler {
	return func(c *call) error {
		return c.toggleCaller(c.ticket.subscribers, on, func() any { return s.ticketRecord(c) })
	}
}

// ticketRecord renders the loaded issue (without user_notes_count, as the
// subscribe and move answers show it) or merge request.
func (s *Server) ticketRecord(c *call) any {
	if c.issue != nil {
		return s.issueJSON(c.issue, c.user, false)
	}
	return s.mergeRequestJSON(c.mr, c.user)
}

// deleteTicket is admin or owner only and soft; anyone else gets 404.
func (s *Server) deleteTicket(c *call) error {
	if !s.isOwner(c.user, c.project) {
		if c.issue != nil {
			return errNotFound("Issue")
		}
		return errNotFound("Merge Request")
	}
	c.ticket.deleted = true
	if c.issue != nil {
		return c.json(http.StatusOK, s.issueJSON(c.issue, c.user, true))
	}
	return c.json(http.StatusOK, s.mergeRequestJSON(c.mr, c.user))
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

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}
