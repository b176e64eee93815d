package collabtest

// registerRoutes wires every resource's endpoints. Literal routes are
// registered before the parameterised ones they would otherwise shadow.
func (s *Server) registerRoutes() {
	s.projectRoutes()
	s.groupRoutes()
	s.memberRoutes()
	s.hookRoutes()
	s.branchRoutes()
	s.settingsRoutes()
	s.jobQueueRoutes()
	s.issueRoutes()
	s.noteRoutes()
	s.milestoneRoutes()
	s.labelRoutes()
	s.mergeRequestRoutes()
	s.awardRoutes()
	s.buildRoutes()
	s.runnerRoutes()
}
