package collabtest

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Handle serves pattern with h instead of the fake's own handler, or adds a
// route the fake does not model. pattern is a net/http.ServeMux pattern on
// the full path, such as "GET /api/v3/projects/{id}/repository/tree"; a
// pattern equal to a built-in one replaces it. The built-in patterns name
// their wildcards {id} (a project, or a build in the runner API), {gid},
// {issue_id}, {mr_id}, {note_id}, {award_id}, {build_id}, {hook_id},
// {milestone_id}, {user_id}, {label_id} and {branch...}. h runs without
// authentication or the fake's state, after FailNext. A pattern ServeMux
// refuses is an error.
func (s *Server) Handle(pattern string, h http.Handler) error {
	if h == nil {
		return errors.New("collabtest: Handle: nil handler")
	}
	return s.router.handle(pattern, h)
}

// router keeps routes in layers of ServeMux. A pattern that ServeMux finds
// ambiguous next to one already registered (such as /projects/search/{query}
// beside /projects/{id}/events) goes to a later layer, so that the route
// registered first wins, as on the deployed server.
type router struct {
	mu     sync.RWMutex
	layers []*layer
}

type layer struct {
	mux      *http.ServeMux
	handlers map[string]http.Handler // by pattern, to rebuild mux on a replacement
}

func newLayer() *layer { return &layer{mux: http.NewServeMux(), handlers: map[string]http.Handler{}} }

// register adds pattern to l's mux, reporting ServeMux's panic as an error.
func (l *layer) register(pattern string, h http.Handler) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("collabtest: pattern %q: %v", pattern, v)
		}
	}()
	l.mux.Handle(pattern, h)
	l.handlers[pattern] = h
	return nil
}

func (rt *router) handle(pattern string, h http.Handler) error {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for i, l := range rt.layers {
		if _, ok := l.handlers[pattern]; ok {
			fresh := newLayer()
			for p, old := range l.handlers {
				if p == pattern {
					old = h
				}
				if err := fresh.register(p, old); err != nil {
					return err
				}
			}
			rt.layers[i] = fresh
			return nil
		}
	}
	var lastErr error
	for _, l := range rt.layers {
		if lastErr = l.register(pattern, h); lastErr == nil {
			return nil
		}
	}
	l := newLayer()
	if err := l.register(pattern, h); err != nil {
		return err // not a conflict: the pattern itself is bad
	}
	rt.layers = append(rt.layers, l)
	return nil
}

// find returns the mux of the first layer with a route for r, and the
// route's pattern, or nil.
func (rt *router) find(r *http.Request) (*http.ServeMux, string) {
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	for _, l := range rt.layers {
		if _, pattern := l.mux.Handler(r); pattern != "" {
			return l.mux, pattern
		}
	}
	return nil, ""
}

// serveHTTP is the fake's entry point: injected faults, the request log,
// panic recovery, then routing.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	var route string // the pattern that serves r, "" for none or the control API
	if s.log != nil {
		lw := &logWriter{ResponseWriter: w, status: http.StatusOK}
		start := time.Now()
		defer func() {
			s.log.Info("request", "route", route, "method", r.Method, "path", r.URL.EscapedPath(), "status", lw.status,
				"user", lw.user, "duration", time.Since(start))
		}()
		w = lw
	}
	control := strings.HasPrefix(r.URL.Path, ControlPrefix) // never faulted: it sets the faults
	if status := s.faultFor(control); status != 0 {
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "0")
		}
		writeError(w, errStatus(status, strconv.Itoa(status)+" "+http.StatusText(status)))
		return
	}
	tw := &trackWriter{ResponseWriter: w}
	defer func() {
		if v := recover(); v != nil {
			s.panics.Add(1)
			if !tw.wrote {
				writeError(tw, errStatus(http.StatusInternalServerError, "500 Internal Server Error"))
			}
		}
	}()
	if control {
		s.control.ServeHTTP(tw, r)
		return
	}
	r = s.withoutFormatSuffix(r)
	var mux *http.ServeMux
	if mux, route = s.router.find(r); mux != nil {
		mux.ServeHTTP(tw, r)
		return
	}
	s.noRoute(tw, r)
}

// withoutFormatSuffix reads an unescaped ".ext" on the last path segment as
// a format suffix, as the deployed server does with ".json", when the path
// without it has a route. This is why clients escape dots in path values
// as %2E.
func (s *Server) withoutFormatSuffix(r *http.Request) *http.Request {
	escaped := r.URL.EscapedPath()
	slash := strings.LastIndexByte(escaped, '/')
	dot := strings.LastIndexByte(escaped, '.')
	if dot <= slash+1 {
		return r
	}
	u, err := url.Parse(escaped[:dot])
	if err != nil {
		return r
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = u.Path, u.RawPath
	if mux, _ := s.router.find(r2); mux == nil {
		return r
	}
	return r2
}

// noRoute answers 405 when the path has a route for another method and 404
// otherwise; under /api/v3 only an authenticated caller learns which. The
// token may be in the body, as on a routed path; a body that cannot be
// read supplies none.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/api/v3/") {
		c := &call{s: s, w: w, r: r, form: r.URL.Query()}
		defer c.cleanup()
		_ = c.mergeBody(maxBody) // the route's absence is the answer, not the body's faults
		s.mu.Lock()
		err := s.authenticate(c)
		s.mu.Unlock()
		if err != nil {
			writeError(w, err)
			return
		}
	}
	writeError(w, errNoRoute(r, func(r *http.Request) bool { mux, _ := s.router.find(r); return mux != nil }))
}

// errNoRoute is the answer to r, which has no route: 405 when routed(r)
// holds for another method, 404 otherwise.
func errNoRoute(r *http.Request, routed func(*http.Request) bool) *apiError {
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		other := r.Clone(r.Context())
		other.Method = m
		if routed(other) {
			return errStatus(http.StatusMethodNotAllowed, "405 Method Not Allowed")
		}
	}
	return errStatus(http.StatusNotFound, "404 Not Found")
}

// trackWriter remembers whether anything was written, so that a panic
// after a write does not write twice.
type trackWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackWriter) WriteHeader(code int) { t.wrote = true; t.ResponseWriter.WriteHeader(code) }
func (t *trackWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// logWriter records the status and caller for the request log.
type logWriter struct {
	http.ResponseWriter
	status int
	user   string
}

func (l *logWriter) WriteHeader(code int) { l.status = code; l.ResponseWriter.WriteHeader(code) }

// setLogUser names the caller in the request log, if there is one.
func setLogUser(w http.ResponseWriter, name string) {
	for {
		switch v := w.(type) {
		case *logWriter:
			v.user = name
			return
		case *trackWriter:
			w = v.ResponseWriter
		default:
			return
		}
	}
}

// rule says what a route checks before its handler runs, in this order:
// authentication (unless public), admin, the project ({id}) or group
// ({gid}) lookup, the caller's level there, then the other records of the
// path ({issue_id}, {mr_id}, {note_id}, {award_id}, {build_id}, {hook_id},
// {milestone_id}).
type rule struct {
	admin      bool        // administrators only: 403
	level      int         // least level on the project: 403
	groupOwner bool        // group owner or administrator: 403
	builds     buildAccess // builds enabled and readable or actable
	public     bool        // no consumer-API authentication (the runner API checks its own token)
	unlocked   bool        // the handler takes s.mu itself, after reading a large body
	rawBody    bool        // the handler reads the body itself; only the query is parsed
	upload     bool        // the body may be as large as the attachment limit
}

// handler answers one request. It writes a success itself (c.json, page,
// ...) and returns an *apiError for a failure, which the route writes.
type handler func(c *call) error

// route is one registered endpoint.
type route struct {
	s    *Server
	wild []string // the pattern's wildcard names
	// consumer marks the /api/v3 routes, where blank parameters count as
	// not sent.
	consumer bool
	rule     rule
	serve    handler
}

var wildcardRE = regexp.MustCompile(`\{(\w+)(?:\.\.\.)?\}`)

// api registers a consumer-API endpoint; pattern is "METHOD /path" with the
// path relative to /api/v3.
func (s *Server) api(pattern string, r rule, h handler) {
	method, path, _ := strings.Cut(pattern, " ")
	s.addRoute(method+" /api/v3"+path, r, h).consumer = true
}

// runnerAPI registers a runner-API endpoint relative to /ci/api/v1. Its
// handler checks the runner or build token itself.
func (s *Server) runnerAPI(pattern string, r rule, h handler) {
	method, path, _ := strings.Cut(pattern, " ")
	r.public = true
	s.addRoute(method+" /ci/api/v1"+path, r, h)
}

func (s *Server) addRoute(pattern string, r rule, h handler) *route {
	rt := &route{s: s, rule: r, serve: h}
	for _, m := range wildcardRE.FindAllStringSubmatch(pattern, -1) {
		rt.wild = append(rt.wild, m[1])
	}
	if err := s.router.handle(pattern, rt); err != nil {
		panic(err) // a mistake in the fake's own route table, caught by every test
	}
	return rt
}

func (rt *route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{s: rt.s, w: w, r: r}
	defer c.cleanup()
	if err := c.readParams(rt); err != nil {
		writeError(w, err)
		return
	}
	if rt.rule.unlocked {
		c.finish(rt.serve(c))
		return
	}
	c.finish(rt.runLocked(c))
	c.flush()
}

// runLocked authenticates, resolves and handles with the state lock held,
// releasing it even if the handler panics.
func (rt *route) runLocked(c *call) error {
	rt.s.mu.Lock()
	defer rt.s.mu.Unlock()
	if !rt.rule.public {
		if err := rt.s.authenticate(c); err != nil {
			return err
		}
		setLogUser(c.w, c.user.username)
		if err := c.resolve(rt); err != nil {
			return err
		}
	}
	return rt.serve(c)
}

// resolve runs the route's checks and loads the records its path names.
func (c *call) resolve(rt *route) error {
	if rt.rule.admin && !c.user.admin {
		return errForbidden
	}
	if slices.Contains(rt.wild, "id") {
		c.project = c.s.lookupProject(c.str("id"))
		if c.project == nil || !c.s.canSee(c.user, c.project) {
			return errNotFound("Project")
		}
	}
	if slices.Contains(rt.wild, "gid") {
		c.group = c.s.lookupGroup(c.str("gid"))
		if c.group == nil || !c.s.canSeeGroup(c.user, c.group) {
			return errNotFound("Group")
		}
	}
	if err := c.checkRights(rt.rule); err != nil {
		return err
	}
	for _, name := range rt.wild {
		if load := recordLoaders[name]; load != nil {
			if err := load(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRights applies a rule's level, group-owner and builds checks.
func (c *call) checkRights(r rule) error {
	if r.level > 0 && !c.user.admin && c.s.accessLevel(c.user, c.project) < int(r.level) {
		return errForbidden
	}
	if r.groupOwner && !c.user.admin && c.group.members[c.user.id] < levelOwner {
		return errForbidden
	}
	if r.builds != 0 {
		return c.checkBuildsAccess(r.builds == writeBuilds)
	}
	return nil
}

// recordLoaders load the record a path wildcard names, within the records
// loaded before it, answering 404 when there is none.
var recordLoaders = map[string]func(*call) error{
	"issue_id":     (*call).loadIssue,
	"mr_id":        (*call).loadMergeRequest,
	"note_id":      (*call).loadNote,
	"award_id":     (*call).loadAward,
	"build_id":     (*call).loadBuild,
	"hook_id":      (*call).loadHook,
	"milestone_id": (*call).loadMilestone,
}

// loadRecord resolves the path wildcard name to the record of m that
// belongs to the records loaded before it, into *dst; otherwise it answers
// 404 "<thing> Not Found" ("Not found" when thing is "").
func loadRecord[V any](c *call, name, thing string, m map[int]V, belongs func(V) bool, dst *V) error {
	id, err := c.pathID(name)
	if err != nil {
		return err
	}
	v, ok := m[id]
	if !ok || !belongs(v) {
		return errNotFound(thing)
	}
	*dst = v
	return nil
}

// pathID reads an integer path value; anything else is 404 "Not found".
func (c *call) pathID(name string) (int, error) {
	v := c.r.PathValue(name)
	if !isDigits(v) {
		return 0, errNotFound("")
	}
	return atoi(v), nil
}
