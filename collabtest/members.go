package collabtest

func (s *Server) memberRoutes() {}
