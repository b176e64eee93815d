package collabtest

import "time"

type note struct {
	id, projectID        int
	noteableType         string // Issue or MergeRequest
	noteableID           int
	body, attachment     string
	authorID             int
	system               bool
	upvote, downvote     bool
	createdAt, updatedAt time.Time
}

func (s *Server) noteRoutes() {}
