package collabtest

import (
	"net/http"
	"time"
)

type award struct {
	id                   int
	name                 string
	userID               int
	awardableType        string // Issue, MergeRequest or Note
	awardableID          int
	createdAt, updatedAt time.Time
}

// knownEmoji is the fake's emoji set; other names are 404 as on deployed servers.
var knownEmoji = map[string]bool{
	"thumbsup": true, "thumbsdown": true, "smile": true, "tada": true, "heart": true, "rocket": true, "eyes": true,
	"8ball": true, "100": true, "clap": true, "confused": true, "laughing": true, "white_check_mark": true,
}

func (s *Server) awardRoutes() {
	for _, kind := range []string{"issues", "merge_requests"} {
		for _, prefix := range []string{"/projects/:id/" + kind + "/:noteable_id", "/projects/:id/" + kind + "/:noteable_id/notes/:note_id"} {
			s.handle("GET", prefix+"/award_emoji", s.awardHandler(kind, s.listAwards))
			s.handle("POST", prefix+"/award_emoji", s.awardHandler(kind, s.createAward))
			s.handle("GET", prefix+"/award_emoji/:award_id", s.awardHandler(kind, s.getAward))
			s.handle("DELETE", prefix+"/award_emoji/:award_id", s.awardHandler(kind, s.deleteAward))
		}
	}
}

// awardHandler resolves the awardable: an issue, a merge request, or a note on one.
func (s *Server) awardHandler(kind string, h func(c *call, typ string, id int)) func(*call) {
	return func(c *call) {
		p := c.project()
		if p == nil {
			return
		}
		if _, hasNote := c.params["note_id"]; hasNote {
			if n := c.projectNote(p, kind); n != nil {
				h(c, "Note", n.id)
			}
			return
		}
		if typ, id, _, ok := c.noteable(p, kind); ok {
			h(c, typ, id)
		}
	}
}

func (s *Server) awardJSON(a *award) any {
	return map[string]any{"id": a.id, "name": a.name, "user": s.userJSON(a.userID), "created_at": ts(a.createdAt),
		"updated_at": ts(a.updatedAt), "awardable_id": a.awardableID, "awardable_type": a.awardableType}
}

func (s *Server) listAwards(c *call, typ string, id int) {
	var out []*award
	for _, aid := range sortedKeys(s.awards) {
		if a := s.awards[aid]; a.awardableType == typ && a.awardableID == id {
			out = append(out, a)
		}
	}
	page(c, out, s.awardJSON)
}

// findAward resolves :award_id on the awardable.
func (c *call) findAward(typ string, id int) *award {
	aid, ok := c.pathInt("award_id")
	if !ok {
		return nil
	}
	a := c.s.awards[aid]
	if a == nil || a.awardableType != typ || a.awardableID != id {
		c.notFound("Award Emoji")
		return nil
	}
	return a
}

func (s *Server) getAward(c *call, typ string, id int) {
	if a := c.findAward(typ, id); a != nil {
		c.json(http.StatusOK, s.awardJSON(a))
	}
}

// createAward answers 404 for an unknown emoji or a repeat by the same user.
func (s *Server) createAward(c *call, typ string, id int) {
	name := c.str("name")
	if name == "" {
		c.missing("name")
		return
	}
	if !knownEmoji[name] {
		c.notFound("Award Emoji")
		return
	}
	for _, a := range s.awards {
		if a.awardableType == typ && a.awardableID == id && a.userID == c.user.id && a.name == name {
			c.notFound("Award Emoji")
			return
		}
	}
	now := s.now()
	a := &award{id: s.newID(), name: name, userID: c.user.id, awardableType: typ, awardableID: id, createdAt: now, updatedAt: now}
	s.awards[a.id] = a
	c.json(http.StatusCreated, s.awardJSON(a))
}

// deleteAward: only the author or an admin, else 401.
func (s *Server) deleteAward(c *call, typ string, id int) {
	a := c.findAward(typ, id)
	if a == nil {
		return
	}
	if a.userID != c.user.id && !c.user.admin {
		c.unauthorized()
		return
	}
	delete(s.awards, a.id)
	c.json(http.StatusOK, s.awardJSON(a))
}
