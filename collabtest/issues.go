package collabtest

import "time"

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

func (s *Server) issueRoutes() {}

// AddIssue seeds an open issue and returns its id.
func (s *Server) AddIssue(projectID, authorID int, title string, labels ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	is := &issue{
		id: s.newID(), iid: s.nextIID(projectID), projectID: projectID, title: title, state: "opened",
		createdAt: now, updatedAt: now, labels: append([]string{}, labels...), authorID: authorID,
		subscribers: map[int]bool{authorID: true},
	}
	s.issues[is.id] = is
	s.addEvent(projectID, authorID, actionOpened, "Issue", is.id, title, 0)
	return is.id
}
