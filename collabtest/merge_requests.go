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

// buildStatusChanged is called whenever a build's status changes, so that a
// merge request set to merge when its build succeeds can merge.
func (s *Server) buildStatusChanged(b *build) {}

// AddMergeRequest seeds an open merge request and returns its id.
func (s *Server) AddMergeRequest(projectID, authorID int, source, target, title string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	mr := &mergeRequest{
		id: s.newID(), iid: s.nextIID(projectID), projectID: projectID, sourceProjectID: projectID, targetProjectID: projectID,
		sourceBranch: source, targetBranch: target, title: title, state: "opened", createdAt: now, updatedAt: now,
		authorID: authorID, labels: []string{}, subscribers: map[int]bool{authorID: true},
	}
	s.mergeRequests[mr.id] = mr
	return mr.id
}

// SetMergeConflict makes a merge request conflict (or not) with its target.
func (s *Server) SetMergeConflict(mergeRequestID int, conflicts bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if mr := s.mergeRequests[mergeRequestID]; mr != nil {
		mr.conflicts = conflicts
	}
}

// isOpen covers the two open states.
func (mr *mergeRequest) isOpen() bool { return mr.state == "opened" || mr.state == "reopened" }
