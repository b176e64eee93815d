package collabtest

type runner struct {
	id                int
	token             string
	description, name string
	active, isShared  bool
}

func (s *Server) runnerRoutes() {}
