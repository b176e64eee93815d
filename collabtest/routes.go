package collabtest

// registerRoutes wires every resource's endpoints. A route registered
// earlier wins over a later one that matches the same path, as the literal
// /projects/search/{query} does over /projects/{id}/events.
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
	s.userRoutes()

	// Deprecated routes, kept for the clients of deployed servers that still
	// call them; nothing in this module does.
	s.deprecatedMergeRequestRoutes()
}
