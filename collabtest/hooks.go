package collabtest

import "time"

type hook struct {
	id, projectID                                                 int
	url                                                           string
	pushEvents, issuesEvents, mergeRequestsEvents                 bool
	tagPushEvents, noteEvents, buildEvents, enableSSLVerification bool
	createdAt                                                     time.Time
}

func (s *Server) hookRoutes() {}
