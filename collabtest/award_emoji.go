package collabtest

import "time"

type award struct {
	id                   int
	name                 string
	userID               int
	awardableType        string // Issue, MergeRequest or Note
	awardableID          int
	createdAt, updatedAt time.Time
}

func (s *Server) awardRoutes() {}
