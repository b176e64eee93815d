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

// AddNote seeds a comment on an issue ("Issue") or merge request
// ("MergeRequest") and returns its id.
func (s *Server) AddNote(projectID int, noteableType string, noteableID, authorID int, body string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	n := &note{id: s.newID(), projectID: projectID, noteableType: noteableType, noteableID: noteableID,
		body: body, authorID: authorID, createdAt: now, updatedAt: now}
	s.notes[n.id] = n
	s.addEvent(projectID, authorID, actionCommented, "Note", n.id, body, n.id)
	return n.id
}
