package collabtest

import (
	"net/http"
	"net/url"
	"strconv"
	"time"
)

type hook struct {
	id, projectID                                                 int
	url                                                           string
	pushEvents, issuesEvents, mergeRequestsEvents                 bool
	tagPushEvents, noteEvents, buildEvents, enableSSLVerification bool
	createdAt                                                     time.Time
}

func (s *Server) hookRoutes() {
	s.handle("GET", "/projects/:id/hooks", s.listHooks)
	s.handle("GET", "/projects/:id/hooks/:hook_id", s.getHook)
	s.handle("POST", "/projects/:id/hooks", s.saveHook)
	s.handle("PUT", "/projects/:id/hooks/:hook_id", s.saveHook)
	s.handle("DELETE", "/projects/:id/hooks/:hook_id", s.deleteHook)
}

// hookJSON renders the flags as the strings "true"/"false", as the contract shows them.
func hookJSON(h *hook) any {
	b := strconv.FormatBool
	return map[string]any{
		"id": h.id, "project_id": h.projectID, "url": h.url, "created_at": ts(h.createdAt),
		"push_events": b(h.pushEvents), "issues_events": b(h.issuesEvents), "merge_requests_events": b(h.mergeRequestsEvents),
		"tag_push_events": b(h.tagPushEvents), "note_events": b(h.noteEvents), "build_events": b(h.buildEvents),
		"enable_ssl_verification": b(h.enableSSLVerification),
	}
}

// projectHook resolves :hook_id within a project the caller masters.
func (c *call) projectHook(p *project) *hook {
	id, ok := c.pathInt("hook_id")
	if !ok {
		return nil
	}
	h := c.s.hooks[id]
	if h == nil || h.projectID != p.id {
		c.notFound("")
		return nil
	}
	return h
}

func (s *Server) listHooks(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 40) {
		return
	}
	var out []*hook
	for _, id := range sortedKeys(s.hooks) {
		if h := s.hooks[id]; h.projectID == p.id {
			out = append(out, h)
		}
	}
	page(c, out, hookJSON)
}

func (s *Server) getHook(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 40) {
		return
	}
	if h := c.projectHook(p); h != nil {
		c.json(http.StatusOK, hookJSON(h))
	}
}

// saveHook creates (POST) or edits (PUT) a hook; url is required and validated.
func (s *Server) saveHook(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 40) {
		return
	}
	h := &hook{projectID: p.id, pushEvents: true, enableSSLVerification: true, createdAt: s.now()}
	status := http.StatusCreated
	if c.r.Method == http.MethodPut {
		if h = c.projectHook(p); h == nil {
			return
		}
		status = http.StatusOK
	}
	if !c.has("url") {
		c.missing("url")
		return
	}
	u, err := url.Parse(c.str("url"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		c.failError(http.StatusUnprocessableEntity, "Invalid url given")
		return
	}
	h.url = c.str("url")
	c.setBool("push_events", &h.pushEvents)
	c.setBool("issues_events", &h.issuesEvents)
	c.setBool("merge_requests_events", &h.mergeRequestsEvents)
	c.setBool("tag_push_events", &h.tagPushEvents)
	c.setBool("note_events", &h.noteEvents)
	c.setBool("build_events", &h.buildEvents)
	c.setBool("enable_ssl_verification", &h.enableSSLVerification)
	if h.id == 0 {
		h.id = s.newID()
		s.hooks[h.id] = h
	}
	c.json(status, hookJSON(h))
}

// deleteHook answers 404 for a missing hook, as deployed servers do.
func (s *Server) deleteHook(c *call) {
	p := c.project()
	if p == nil || !c.requireLevel(p, 40) {
		return
	}
	if h := c.projectHook(p); h != nil {
		delete(s.hooks, h.id)
		c.json(http.StatusOK, hookJSON(h))
	}
}
