package collabtest

import (
	"net/http"
	"slices"
	"strings"
	"sync"
)

// knownRoutes is the fake's router, built once without a server behind it,
// to name requests by their route (Route): the fake serves every route of
// the SDK.
var knownRoutes = sync.OnceValue(func() *router {
	s := &Server{}
	s.registerRoutes()
	return &s.router
})

// Route names r by the method and route template of the endpoint the fake
// serves it on, such as "GET /api/v3/projects/:id/issues", as a recorded
// cassette names its exchanges; "" when no route serves r.
func Route(r *http.Request) string {
	if _, pattern := knownRoutes().find(r); pattern != "" {
		return templateOf(pattern)
	}
	return ""
}

// templateOf turns a ServeMux pattern into a route template:
// "GET /api/v3/projects/{id}/notes/{note_id}" gives
// "GET /api/v3/projects/:id/notes/:note_id".
func templateOf(pattern string) string {
	segs := strings.Split(pattern, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			segs[i] = ":" + strings.TrimSuffix(strings.TrimSuffix(s[1:len(s)-1], "..."), "$")
		}
	}
	return strings.TrimSuffix(strings.Join(segs, "/"), "/{$}")
}

// Routes returns the route of every endpoint the fake serves, sorted, such
// as "GET /api/v3/projects/:id/issues": the names Route gives, to see which
// endpoints a recorded session reached.
func Routes() []string {
	var out []string
	rt := knownRoutes()
	for _, l := range rt.layers {
		for p := range l.handlers {
			out = append(out, templateOf(p))
		}
	}
	slices.Sort(out)
	return out
}
