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
