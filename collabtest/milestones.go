package collabtest

import "time"

type milestone struct {
	id, iid, projectID        int
	title, description, state string // active or closed
	dueDate                   string // YYYY-MM-DD or ""
	createdAt, updatedAt      time.Time
}

func (s *Server) milestoneRoutes() {}
