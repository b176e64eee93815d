package collabtest

import (
	"net/http"
	"net/url"
	"time"

	"github.com/collabsvc/collab"
)

type hook struct {
	id, projectID                                                 int
	url                                                           string
	pushEvents, issuesEvents, mergeRequestsEvents                 bool
	tagPushEvents, noteEvents, buildEvents, enableSSLVerification bool
	createdAt                                                     time.Time
}

func (s *Server) hookRoutes() {
	s.api("GET /projects/{id}/hooks", rule{level: levelMaster}, s.listHooks)
	s.api("GET /projects/{id}/hooks/{hook_id}", rule{level: levelMaster}, s.getHook)
	s.api("POST /projects/{id}/hooks", rule{level: levelMaster}, s.saveHook)
	s.api("PUT /projects/{id}/hooks/{hook_id}", rule{level: levelMaster}, s.saveHook)
	s.api("DELETE /projects/{id}/hooks/{hook_id}", rule{level: levelMaster}, s.deleteHook)
}

// hookJSON is h as a record; serverform writes its flags as the strings
// "true"/"false", as the API documentation shows them.
func hookJSON(h *hook) any {
	return reply(&collab.ProjectHook{
		ID: h.id, ProjectID: h.projectID, URL: h.url, CreatedAt: apiTime(h.createdAt),
		PushEvents: h.pushEvents, IssuesEvents: h.issuesEvents, MergeRequestsEvents: h.mergeRequestsEvents,
		TagPushEvents: h.tagPushEvents, NoteEvents: h.noteEvents, BuildEvents: h.buildEvents,
		EnableSSLVerification: h.enableSSLVerification,
	})
}

// loadHook resolves {hook_id} within the project: "404 Not found", also
// for DELETE, as deployed servers answer.
func (c *call) loadHook() error {
	return loadRecord(c, "hook_id", "", c.s.hooks, func(h *hook) bool { return h.projectID == c.project.id }, &c.hook)
}

func (s *Server) listHooks(c *call) error {
	var out []*hook
	for _, id := range sortedKeys(s.hooks) {
		if h := s.hooks[id]; h.projectID == c.project.id {
			out = append(out, h)
		}
	}
	return page(c, out, hookJSON)
}

func (s *Server) getHook(c *call) error { return c.json(http.StatusOK, hookJSON(c.hook)) }

// saveHook creates (POST) or edits (PUT) a hook; url is required and validated.
func (s *Server) saveHook(c *call) error {
	h := c.hook
	status := http.StatusOK
	if h == nil {
		h = &hook{projectID: c.project.id, pushEvents: true, enableSSLVerification: true, createdAt: s.now()}
		status = http.StatusCreated
	}
	if !c.has("url") {
		return errMissing("url")
	}
	u, err := url.Parse(c.str("url"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errError(http.StatusUnprocessableEntity, "Invalid url given")
	}
	h.url = c.str("url")
	c.setBools(map[string]*bool{
		"push_events": &h.pushEvents, "issues_events": &h.issuesEvents, "merge_requests_events": &h.mergeRequestsEvents,
		"tag_push_events": &h.tagPushEvents, "note_events": &h.noteEvents, "build_events": &h.buildEvents,
		"enable_ssl_verification": &h.enableSSLVerification,
	})
	if h.id == 0 {
		h.id = s.newID()
		s.hooks[h.id] = h
	}
	return c.json(status, hookJSON(h))
}

func (s *Server) deleteHook(c *call) error {
	delete(s.hooks, c.hook.id)
	return c.json(http.StatusOK, hookJSON(c.hook))
}
