package collabtest

func (s *Server) jobQueueRoutes() {}
