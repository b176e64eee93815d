package collabtest

import (
	"net/http"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/serverform"
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
	for _, kind := range []string{"/projects/{id}/issues/{issue_id}", "/projects/{id}/merge_requests/{mr_id}"} {
		for _, base := range []string{kind, kind + "/notes/{note_id}"} {
			s.api("GET "+base+"/award_emoji", rule{}, s.listAwards)
			s.api("POST "+base+"/award_emoji", rule{}, s.createAward)
			s.api("GET "+base+"/award_emoji/{award_id}", rule{}, s.getAward)
			s.api("DELETE "+base+"/award_emoji/{award_id}", rule{}, s.deleteAward)
		}
	}
}

// awardable names what the path's award emoji belong to: the note when
// there is one, else the issue or merge request.
func (c *call) awardable() (typ string, id int) {
	if c.note != nil {
		return "Note", c.note.id
	}
	return c.ticket.kind, c.ticket.id
}

// loadAward resolves {award_id} on the awardable.
func (c *call) loadAward() error {
	typ, id := c.awardable()
	return loadRecord(c, "award_id", "Award Emoji", c.s.awards,
		func(a *award) bool { return a.awardableType == typ && a.awardableID == id }, &c.award)
}

func (s *Server) awardJSON(a *award) any {
	return reply(&collab.AwardEmoji{ID: a.id, Name: a.name, User: s.userRecord(a.userID), CreatedAt: apiTime(a.createdAt),
		UpdatedAt: apiTime(a.updatedAt), AwardableID: a.awardableID, AwardableType: a.awardableType},
		serverform.Under("user", briefUserOmit...)...)
}

func (s *Server) listAwards(c *call) error {
	typ, id := c.awardable()
	var out []*award
	for _, aid := range sortedKeys(s.awards) {
		if a := s.awards[aid]; a.awardableType == typ && a.awardableID == id {
			out = append(out, a)
		}
	}
	return page(c, out, s.awardJSON)
}

func (s *Server) getAward(c *call) error { return c.json(http.StatusOK, s.awardJSON(c.award)) }

// createAward answers 404 for an unknown emoji or a repeat by the same user.
func (s *Server) createAward(c *call) error {
	typ, id := c.awardable()
	name := c.str("name")
	if name == "" {
		return errMissing("name")
	}
	if !knownEmoji[name] {
		return errNotFound("Award Emoji")
	}
	for _, a := range s.awards {
		if a.awardableType == typ && a.awardableID == id && a.userID == c.user.id && a.name == name {
			return errNotFound("Award Emoji")
		}
	}
	now := s.now()
	a := &award{id: s.newID(), name: name, userID: c.user.id, awardableType: typ, awardableID: id, createdAt: now, updatedAt: now}
	s.awards[a.id] = a
	return c.json(http.StatusCreated, s.awardJSON(a))
}

// deleteAward: only the author or an admin, else 401.
func (s *Server) deleteAward(c *call) error {
	if c.award.userID != c.user.id && !c.user.admin {
		return errUnauthorized
	}
	delete(s.awards, c.award.id)
	return c.json(http.StatusOK, s.awardJSON(c.award))
}
