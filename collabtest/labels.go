package collabtest

import "time"

type label struct {
	id, projectID            int
	name, color, description string
	subscribers              map[int]bool
	createdAt, updatedAt     time.Time
}

func (s *Server) labelRoutes() {}
