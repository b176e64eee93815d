package collabtest

import (
	"net/http"
	"strings"
	"time"
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

func (s *Server) noteRoutes() {
	for _, kind := range []string{"issues", "merge_requests"} {
		base := "/projects/:id/" + kind + "/:noteable_id/notes"
		s.handle("GET", base, s.listNotes(kind))
		s.handle("POST", base, s.createNote(kind))
		s.handle("GET", base+"/:note_id", s.getNote(kind))
		s.handle("PUT", base+"/:note_id", s.updateNote(kind))
		s.handle("DELETE", base+"/:note_id", s.deleteNote(kind))
	}
}

// noteJSON renders a note with the vote flags under the server's literal keys.
func (s *Server) noteJSON(n *note) map[string]any {
	return map[string]any{
		"id": n.id, "body": n.body, "attachment": orNil(n.attachment), "author": s.userJSON(n.authorID),
		"created_at": ts(n.createdAt), "updated_at": ts(n.updatedAt), "system": n.system,
		"noteable_id": n.noteableID, "noteable_type": n.noteableType, "upvote?": n.upvote, "downvote?": n.downvote,
	}
}

// noteable resolves :noteable_id to a live issue or merge request of p and
// returns its type name and title.
func (c *call) noteable(p *project, kind string) (typ string, id int, title string, ok bool) {
	id, ok = c.pathInt("noteable_id")
	if !ok {
		return "", 0, "", false
	}
	if kind == "issues" {
		if is := c.s.issues[id]; is != nil && !is.deleted && is.projectID == p.id {
			return "Issue", id, is.title, true
		}
		c.notFound("Issue")
		return "", 0, "", false
	}
	if mr := c.s.mergeRequests[id]; mr != nil && !mr.deleted && mr.projectID == p.id {
		return "MergeRequest", id, mr.title, true
	}
	c.notFound("Merge Request")
	return "", 0, "", false
}

// projectNote resolves :note_id on the noteable.
func (c *call) projectNote(p *project, kind string) *note {
	typ, id, _, ok := c.noteable(p, kind)
	if !ok {
		return nil
	}
	nid, ok := c.pathInt("note_id")
	if !ok {
		return nil
	}
	n := c.s.notes[nid]
	if n == nil || n.noteableType != typ || n.noteableID != id {
		c.notFound("Note")
		return nil
	}
	return n
}

func (s *Server) listNotes(kind string) func(*call) {
	return func(c *call) {
		p := c.project()
		if p == nil {
			return
		}
		typ, id, _, ok := c.noteable(p, kind)
		if !ok {
			return
		}
		var out []*note
		for _, nid := range sortedKeys(s.notes) {
			if n := s.notes[nid]; n.noteableType == typ && n.noteableID == id {
				out = append(out, n)
			}
		}
		page(c, out, func(n *note) any { return s.noteJSON(n) })
	}
}

func (s *Server) getNote(kind string) func(*call) {
	return func(c *call) {
		if p := c.project(); p != nil {
			if n := c.projectNote(p, kind); n != nil {
				c.json(http.StatusOK, s.noteJSON(n))
			}
		}
	}
}

func (s *Server) createNote(kind string) func(*call) {
	return func(c *call) {
		p := c.project()
		if p == nil {
			return
		}
		typ, id, _, ok := c.noteable(p, kind)
		if !ok {
			return
		}
		body := c.str("body")
		if strings.TrimSpace(body) == "" {
			c.missing("body")
			return
		}
		now := s.now()
		n := &note{id: s.newID(), projectID: p.id, noteableType: typ, noteableID: id, body: body, authorID: c.user.id, createdAt: now, updatedAt: now}
		s.notes[n.id] = n
		s.addEvent(p.id, c.user.id, actionCommented, "Note", n.id, body, n.id)
		c.json(http.StatusCreated, s.noteJSON(n))
	}
}

// requireNoteAuthor: the author or an admin may change a note.
func (c *call) requireNoteAuthor(n *note) bool {
	if c.user.admin || n.authorID == c.user.id {
		return true
	}
	c.forbidden()
	return false
}

func (s *Server) updateNote(kind string) func(*call) {
	return func(c *call) {
		p := c.project()
		if p == nil {
			return
		}
		n := c.projectNote(p, kind)
		if n == nil || !c.requireNoteAuthor(n) {
			return
		}
		if strings.TrimSpace(c.str("body")) == "" {
			c.missing("body")
			return
		}
		n.body, n.updatedAt = c.str("body"), s.now()
		c.json(http.StatusOK, s.noteJSON(n))
	}
}

func (s *Server) deleteNote(kind string) func(*call) {
	return func(c *call) {
		p := c.project()
		if p == nil {
			return
		}
		n := c.projectNote(p, kind)
		if n == nil || !c.requireNoteAuthor(n) {
			return
		}
		delete(s.notes, n.id)
		c.json(http.StatusOK, s.noteJSON(n))
	}
}
