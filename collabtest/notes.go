package collabtest

import (
	"net/http"
	"strings"
	"time"

	"github.com/collabsvc/collab/internal/serverform"
)

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

func (s *Server) noteRoutes() {
	for _, base := range []string{"/projects/{id}/issues/{issue_id}/notes", "/projects/{id}/merge_requests/{mr_id}/notes"} {
		s.api("GET "+base, rule{}, s.listNotes)
		s.api("POST "+base, rule{}, s.createNoteFrom("body", func(n *note) any { return s.noteJSON(n) }))
		s.api("GET "+base+"/{note_id}", rule{}, s.getNote)
		s.api("PUT "+base+"/{note_id}", rule{}, s.updateNote)
		s.api("DELETE "+base+"/{note_id}", rule{}, s.deleteNote)
	}
}

// AddNote seeds a comment on an issue ("Issue") or merge request
// ("MergeRequest") and returns its id. A noteable that is not in the
// project, or an unknown author, is a mistake (see Err) and returns 0.
//
// Deprecated: Use Seed.IssueNote or Seed.MergeRequestNote, which takes the collab package's types and
// returns the API's record. This helper goes in the next minor release.
func (s *Server) AddNote(projectID int, noteableType string, noteableID, authorID int, body string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t *ticket
	switch noteableType {
	case "Issue":
		if is := s.issues[noteableID]; is != nil {
			t = &is.ticket
		}
	case "MergeRequest":
		if mr := s.mergeRequests[noteableID]; mr != nil {
			t = &mr.ticket
		}
	}
	if t == nil || t.projectID != projectID || s.users[authorID] == nil {
		s.misuse("AddNote: no %s %d in project %d, or no user %d", noteableType, noteableID, projectID, authorID)
		return 0
	}
	return s.insertNote(t, authorID, body).id
}

// insertNote stores a new comment on t by author and records the event.
func (s *Server) insertNote(t *ticket, authorID int, body string) *note {
	now := s.now()
	n := &note{id: s.newID(), projectID: t.projectID, noteableType: t.kind, noteableID: t.id,
		body: body, authorID: authorID, createdAt: now, updatedAt: now}
	s.notes[n.id] = n
	s.addEvent(t.projectID, authorID, actionCommented, "Note", n.id, body, n.id)
	s.emitNote(n)
	return n
}

// loadNote resolves {note_id} on the loaded issue or merge request.
func (c *call) loadNote() error {
	return loadRecord(c, "note_id", "Note", c.s.notes,
		func(n *note) bool { return n.noteableType == c.ticket.kind && n.noteableID == c.ticket.id }, &c.note)
}

// noteJSON renders a note with the vote flags under the server's literal keys.
// noteOmit are the keys of a collab.Note that the notes endpoints leave
// out: the event spelling of the votes, which the codec writes as aliases.
var noteOmit = append([]string{"upvote", "downvote"}, serverform.Under("author", briefUserOmit...)...)

func (s *Server) noteJSON(n *note) any {
	return reply(s.noteRecord(n), noteOmit...)
}

// ticketNotes lists the notes on an issue or merge request, oldest first.
func (s *Server) ticketNotes(t *ticket) []*note {
	var out []*note
	for _, nid := range sortedKeys(s.notes) {
		if n := s.notes[nid]; n.noteableType == t.kind && n.noteableID == t.id {
			out = append(out, n)
		}
	}
	return out
}

func (s *Server) listNotes(c *call) error {
	return page(c, s.ticketNotes(c.ticket), func(n *note) any { return s.noteJSON(n) })
}

func (s *Server) getNote(c *call) error { return c.json(http.StatusOK, s.noteJSON(c.note)) }

// createNoteFrom serves a POST that adds a note whose text is the required
// parameter param, answering 201 with render's record.
func (s *Server) createNoteFrom(param string, render func(*note) any) handler {
	return func(c *call) error {
		text := c.str(param)
		if strings.TrimSpace(text) == "" {
			return errMissing(param)
		}
		return c.json(http.StatusCreated, render(s.insertNote(c.ticket, c.user.id, text)))
	}
}

// commentJSON renders a note as the deprecated merge request comments
// routes do: only its text and author.
func (s *Server) commentJSON(n *note) any {
	return map[string]any{"note": n.body, "author": s.userJSON(n.authorID)}
}

func (s *Server) listComments(c *call) error { return page(c, s.ticketNotes(c.ticket), s.commentJSON) }

// checkNoteAuthor: the author or an admin may change a note.
func (c *call) checkNoteAuthor() error {
	if c.user.admin || c.note.authorID == c.user.id {
		return nil
	}
	return errForbidden
}

func (s *Server) updateNote(c *call) error {
	if err := c.checkNoteAuthor(); err != nil {
		return err
	}
	if strings.TrimSpace(c.str("body")) == "" {
		return errMissing("body")
	}
	c.note.body, c.note.updatedAt = c.str("body"), s.now()
	return c.json(http.StatusOK, s.noteJSON(c.note))
}

func (s *Server) deleteNote(c *call) error {
	if err := c.checkNoteAuthor(); err != nil {
		return err
	}
	delete(s.notes, c.note.id)
	return c.json(http.StatusOK, s.noteJSON(c.note))
}
