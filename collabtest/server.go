// Package collabtest is an in-memory fake of the Collaboration Service: a
// real HTTP server on loopback that implements the contract's consumer API
// (/api/v3) and runner API (/ci/api/v1) with their access rules, state
// transitions, pagination headers and error bodies.
//
// Start one in a test, point a collab.Client at URL, and close it after:
//
//	srv := collabtest.NewServer()
//	defer srv.Close()
//	c, _ := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
//
// It is safe for concurrent use and answers bad input with the contract's
// 400 shapes instead of panicking.
package collabtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a running fake Collaboration Service.
type Server struct {
	// URL is the base URL, such as http://127.0.0.1:41234, without /api/v3.
	URL string
	// AdminID is the seeded administrator's user id.
	AdminID int
	// AdminToken is the seeded administrator's private token.
	AdminToken string
	// AdminOAuthToken is an OAuth 2 token of the same administrator.
	AdminOAuthToken string

	srv    *httptest.Server
	routes []*routeEntry
	panics atomic.Int64

	faultMu     sync.Mutex
	faultStatus int
	faultsLeft  int

	mu sync.Mutex // guards everything below; handlers run with it held
	db
}

// NewServer starts a fake server on a random loopback port. It panics if no
// port can be had, as httptest.NewServer does.
func NewServer() *Server {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("collabtest: %v", err))
	}
	return s
}

// Listen starts a fake server on addr, for cmd/collabfake and manual tries.
func Listen(addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{}
	s.db.init()
	s.registerRoutes()
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	s.srv.Listener.Close()
	s.srv.Listener = l
	s.srv.Start()
	s.URL = s.srv.URL
	admin := s.AddUser("root", true)
	s.AdminID = admin.ID
	s.AdminToken = admin.Token
	s.AdminOAuthToken = s.AddToken(admin.ID, OAuthToken)
	return s, nil
}

// Close shuts the server down and waits for requests in flight.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Client returns an *http.Client that talks to this server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Panics reports how many handler panics were recovered (each answered 500).
// A correct fake has none; tests assert it stays 0.
func (s *Server) Panics() int { return int(s.panics.Load()) }

// TokenKind is the kind of credential AddToken creates.
type TokenKind int

// The three token kinds of the contract.
const (
	PrivateToken TokenKind = iota
	OAuthToken
	PersonalAccessToken
)

// User is what AddUser returns: the new user's id, name and private token.
type User struct {
	ID       int
	Username string
	Token    string
}

// AddUser creates an active user with a private token.
func (s *Server) AddUser(username string, admin bool) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := &user{
		id: s.newID(), username: username, name: strings.ToUpper(username[:min(1, len(username))]) + username[min(1, len(username)):],
		email: username + "@example.com", state: "active", admin: admin, createdAt: s.now(),
		canCreateGroup: true,
	}
	u.namespaceID = s.newID()
	s.users[u.id] = u
	tok := s.newToken(u.id, PrivateToken)
	return User{ID: u.id, Username: username, Token: tok}
}

// AddToken gives an existing user another token of the given kind.
func (s *Server) AddToken(userID int, kind TokenKind) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newToken(userID, kind)
}

func (s *Server) newToken(userID int, kind TokenKind) string {
	prefix := [...]string{"ptok-", "oauth-", "pat-"}[kind]
	tok := prefix + randomHex(12)
	s.tokens[tok] = &token{userID: userID, kind: kind}
	return tok
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Server) newID() int {
	s.lastID++
	return s.lastID
}

func (s *Server) now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// FailNext makes the next n requests fail with status before they reach any
// handler, to test a client's retries. 429 and 503 answers carry
// "Retry-After: 0". Nothing in the state changes for a failed request.
func (s *Server) FailNext(n, status int) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.faultsLeft, s.faultStatus = n, status
}

// injectedFault consumes one FailNext failure, if any is left.
func (s *Server) injectedFault() int {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	if s.faultsLeft <= 0 {
		return 0
	}
	s.faultsLeft--
	return s.faultStatus
}

// serveHTTP routes, authenticates and runs a handler under the state lock.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{s: s, w: w, r: r}
	if status := s.injectedFault(); status != 0 {
		if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "0")
		}
		c.fail(status, strconv.Itoa(status)+" "+http.StatusText(status))
		return
	}
	defer func() {
		if v := recover(); v != nil {
			s.panics.Add(1)
			if !c.wrote {
				c.fail(http.StatusInternalServerError, "500 Internal Server Error")
			}
		}
	}()
	rt, params, allowed := s.match(r.Method, r.URL.EscapedPath())
	if rt == nil {
		if strings.HasPrefix(r.URL.Path, "/api/v3/") && !s.authenticateLocked(c) {
			return
		}
		if allowed {
			c.fail(http.StatusMethodNotAllowed, "405 Method Not Allowed")
		} else {
			c.fail(http.StatusNotFound, "404 Not Found")
		}
		return
	}
	c.params = params
	if !rt.unlocked && !c.parseForm() {
		return
	}
	if rt.unlocked {
		rt.h(c)
		return
	}
	s.runLocked(c, rt)
	c.flush()
}

// runLocked authenticates and handles with the state lock held, releasing
// it even if the handler panics.
func (s *Server) runLocked(c *call, rt *routeEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rt.public || s.authenticate(c) {
		rt.h(c)
	}
}

func (s *Server) authenticateLocked(c *call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authenticate(c)
}

// authenticate finds the caller from any of the three token kinds, in a
// header or the query, then applies sudo. It answers 401/403/404 itself.
func (s *Server) authenticate(c *call) bool {
	q := c.r.URL.Query()
	secret := c.r.Header.Get("PRIVATE-TOKEN")
	if secret == "" {
		secret = q.Get("private_token")
	}
	if secret == "" {
		if b, ok := strings.CutPrefix(c.r.Header.Get("Authorization"), "Bearer "); ok {
			secret = strings.TrimSpace(b)
		}
	}
	if secret == "" {
		secret = q.Get("access_token")
	}
	t := s.tokens[secret]
	if secret == "" || t == nil || s.users[t.userID] == nil {
		c.fail(http.StatusUnauthorized, "401 Unauthorized")
		return false
	}
	c.user = s.users[t.userID]
	sudo := c.r.Header.Get("SUDO")
	if sudo == "" {
		sudo = q.Get("sudo")
	}
	if sudo == "" {
		return true
	}
	if !c.user.admin {
		c.fail(http.StatusForbidden, "403 Forbidden: Must be admin to use sudo")
		return false
	}
	target := s.findUser(sudo)
	if target == nil {
		c.fail(http.StatusNotFound, "404 No user id or username for: "+sudo+" Not Found")
		return false
	}
	c.user = target
	return true
}

// findUser resolves an id (all digits) or a username.
func (s *Server) findUser(key string) *user {
	if id, err := strconv.Atoi(key); err == nil && isDigits(key) {
		return s.users[id]
	}
	for _, u := range s.users {
		if u.username == key {
			return u
		}
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// routeEntry is one endpoint: a method and a pattern of literal segments and
// :params.
type routeEntry struct {
	method   string
	segs     []string
	h        func(*call)
	public   bool // no consumer-API authentication (the runner API checks its own)
	unlocked bool // the handler reads a large body first and takes s.mu itself
}

// handle registers an authenticated consumer-API endpoint; pattern is
// relative to /api/v3, for example "/projects/:id/issues".
func (s *Server) handle(method, pattern string, h func(*call)) {
	s.addRoute(&routeEntry{method: method, segs: splitPath("/api/v3" + pattern), h: h})
}

// handleRunner registers a runner-API endpoint relative to /ci/api/v1. Its
// handler checks the runner or build token itself. Unlocked handlers must
// take s.mu before touching state.
func (s *Server) handleRunner(method, pattern string, unlocked bool, h func(*call)) {
	s.addRoute(&routeEntry{method: method, segs: splitPath("/ci/api/v1" + pattern), h: h, public: true, unlocked: unlocked})
}

func (s *Server) addRoute(r *routeEntry) { s.routes = append(s.routes, r) }

func splitPath(p string) []string { return strings.Split(strings.Trim(p, "/"), "/") }

// match finds the first route for method and the escaped path. Like the
// deployed server it reads an unescaped ".ext" on the last segment as a
// format suffix, which is why clients must escape dots in path values.
func (s *Server) match(method, escaped string) (*routeEntry, map[string]string, bool) {
	segs := splitPath(escaped)
	candidates := [][]string{segs}
	last := segs[len(segs)-1]
	if i := strings.LastIndexByte(last, '.'); i > 0 {
		stripped := append(append([]string{}, segs[:len(segs)-1]...), last[:i])
		candidates = [][]string{stripped, segs}
	}
	allowed := false
	for _, cand := range candidates {
		for _, rt := range s.routes {
			params, ok := matchSegs(rt.segs, cand)
			if !ok {
				continue
			}
			if rt.method != method {
				allowed = true
				continue
			}
			return rt, params, true
		}
	}
	return nil, nil, allowed
}

func matchSegs(pattern, segs []string) (map[string]string, bool) {
	if len(pattern) != len(segs) {
		return nil, false
	}
	var params map[string]string
	for i, p := range pattern {
		if name, ok := strings.CutPrefix(p, ":"); ok {
			v, err := url.PathUnescape(segs[i])
			if err != nil || v == "" {
				return nil, false
			}
			if params == nil {
				params = map[string]string{}
			}
			params[name] = v
			continue
		}
		if p != segs[i] {
			return nil, false
		}
	}
	return params, true
}
