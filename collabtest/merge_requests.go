package collabtest

import "time"

type mergeRequest struct {
	id, iid, projectID                int
	sourceProjectID, targetProjectID  int
	sourceBranch, targetBranch        string
	title, description, state         string // opened, closed, merged, reopened
	createdAt, updatedAt              time.Time
	authorID, assigneeID, milestoneID int
	labels                            []string
	mergeWhenBuildSucceeds            bool
	shouldRemoveSourceBranch          bool
	mergeCommitMessage                string
	conflicts                         bool // seeded by a helper
	subscribers                       map[int]bool
	deleted                           bool // soft delete
}

func (s *Server) mergeRequestRoutes() {}
