// Package collabtest is an in-memory fake of the Collaboration Service: a
// real HTTP server on loopback that serves the consumer API (/api/v3) and the
// runner API (/ci/api/v1) with their access rules, state transitions,
// pagination headers and error bodies, as deployed servers answer them.
//
// Start one in a test, point a client at URL, and close it after:
//
//	srv := collabtest.NewTestServer(t) // closed when the test ends
//	c, _ := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
//
// Any HTTP client works, not only this module's: parameters are read from
// the query string, a form body, a multipart body or a JSON object body,
// and paths are matched as the server matches them.
//
// Seed the scene with Server.Seed, in the collab package's types; each
// seed returns the record the API answers with:
//
//	alice := srv.Seed.User("alice")
//	p := srv.Seed.Project(alice, "Webshop", collab.InternalVisibility)
//	srv.Seed.Issue(p, alice, "Checkout fails", srv.Seed.Label(p, "bug", "#d9534f"))
//
// The fake is safe for concurrent use and answers bad input with the
// server's 400 shapes instead of failing. Seeding never panics: a bad
// argument fails the test of a server made by NewTestServer, and is kept
// for Err otherwise.
//
// Tests written in other languages reach the same powers (hook tokens,
// faults, deliveries, reset and seeding) over HTTP, under ControlPrefix.
package collabtest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
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
	// Admin is the seeded administrator, "root", with AdminToken.
	Admin User
	// Seed seeds the server's state with typed values.
	Seed *Seeder

	srv     *httptest.Server
	log     *slog.Logger
	panics  atomic.Int64
	router  router
	control http.Handler // the control API, under ControlPrefix
	// freshLastID is the last id a new server has used, where reset
	// starts again.
	freshLastID int

	webhooks *deliverer // webhook delivery, with its own lock

	limits limiter // per-token rate limit and request log

	faultMu     sync.Mutex
	faultStatus int
	faultsLeft  int

	reportMu sync.Mutex
	t        TB // set by NewTestServer
	seedErrs []error

	mu sync.Mutex // guards everything below; handlers run with it held
	db
}

// config is what the options set.
type config struct {
	addr       string
	adminToken string
	log        *slog.Logger
	rate       float64
	burst      int
	replay     http.Handler // serves every request instead of the model, when set
}

// Option configures a server made by NewServer or NewTestServer.
type Option func(*config)

// WithAddr listens on addr (host:port) instead of a free loopback port.
func WithAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// WithAdminToken makes token the administrator's private token instead of
// a random one.
func WithAdminToken(token string) Option { return func(c *config) { c.adminToken = token } }

// WithLog sends l one line per request: method, path (without the query),
// status, the caller's username and the time taken; and one per webhook
// delivery attempt: hook, event, attempt, status or error. Tokens are
// never logged.
func WithLog(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithReplay makes the server answer every request with h instead of its
// model of the service: with a cassette.Replayer, a server that replays a
// recorded session, with the fake's URL and tokens. The seeding helpers
// then change nothing it serves.
func WithReplay(h http.Handler) Option {
	return func(c *config) {
		if h != nil {
			c.replay = h
		}
	}
}

// TB is the part of *testing.T, *testing.B and *testing.F that
// NewTestServer uses.
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// NewTestServer starts a fake server for t and closes it when the test
// ends. A seeding helper given a bad argument fails t with a message, and
// so does a handler panic.
func NewTestServer(t TB, opts ...Option) *Server {
	t.Helper()
	s, err := NewServer(opts...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	s.t = t
	t.Cleanup(func() {
		s.Close()
		if n := s.Panics(); n > 0 {
			t.Errorf("collabtest: %d handler panics were answered 500", n)
		}
	})
	return s
}

// NewServer starts a fake server, on a free loopback port unless WithAddr
// says otherwise. Close it when done.
func NewServer(opts ...Option) (*Server, error) {
	cfg := config{addr: "127.0.0.1:0"}
	for _, o := range opts {
		o(&cfg)
	}
	l, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return nil, fmt.Errorf("collabtest: %w", err)
	}
	s := &Server{log: cfg.log, webhooks: newDeliverer(cfg.log)}
	s.db.init()
	s.limits.set(cfg.rate, cfg.burst)
	s.registerRoutes()
	s.control = s.controlMux()
	var h http.Handler = http.HandlerFunc(s.serveLimited)
	if cfg.replay != nil {
		h = cfg.replay
	}
	s.srv = httptest.NewUnstartedServer(h)
	s.srv.Listener.Close()
	s.srv.Listener = l
	s.srv.Start()
	s.URL = s.srv.URL
	admin := s.AddUser("root", true)
	s.AdminID = admin.ID
	s.AdminToken = admin.Token
	if cfg.adminToken != "" {
		s.mu.Lock()
		delete(s.tokens, admin.Token)
		s.tokens[cfg.adminToken] = &token{userID: admin.ID, kind: PrivateToken}
		s.mu.Unlock()
		s.AdminToken = cfg.adminToken
	}
	s.AdminOAuthToken = s.AddToken(admin.ID, OAuthToken)
	admin.Token = s.AdminToken
	s.Admin, s.Seed = admin, &Seeder{s}
	s.freshLastID = s.lastID
	return s, nil
}

// Close shuts the server down and waits for requests in flight. It stops
// webhook delivery first: queued deliveries are dropped and attempts in
// flight are cut short.
func (s *Server) Close() {
	s.webhooks.close()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Client returns an *http.Client that talks to this server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Panics reports how many handler panics were recovered (each answered 500).
// A correct fake has none; tests assert it stays 0.
func (s *Server) Panics() int { return int(s.panics.Load()) }

// Err returns the mistakes seeding helpers were given so far (nil when
// none), for servers not made by NewTestServer.
func (s *Server) Err() error {
	s.reportMu.Lock()
	defer s.reportMu.Unlock()
	return errors.Join(s.seedErrs...)
}

// misuse reports a seeding helper's bad argument: it fails the test of a
// NewTestServer server and is kept for Err either way. It may be called with
// s.mu held.
func (s *Server) misuse(format string, args ...any) {
	err := fmt.Errorf("collabtest: "+format, args...)
	s.reportMu.Lock()
	s.seedErrs = append(s.seedErrs, err)
	t := s.t
	s.reportMu.Unlock()
	if t != nil {
		t.Helper()
		t.Errorf("%v", err)
	}
}

// seedChange is the body of the seeding helpers that change one record:
// with s.mu held, it applies change to records[id], or, for an unknown id,
// reports "<helper>: no <what> <id>" as a mistake (see Err).
func seedChange[T any](s *Server, helper, what string, records map[int]*T, id int, change func(*T)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := records[id]
	if r == nil {
		s.misuse("%s: no %s %d", helper, what, id)
		return
	}
	change(r)
}

// TokenKind is the kind of credential Seed.Token creates.
type TokenKind int

// The three kinds of token the server accepts.
const (
	PrivateToken TokenKind = iota
	OAuthToken
	PersonalAccessToken
)

var tokenPrefix = map[TokenKind]string{PrivateToken: "ptok-", OAuthToken: "oauth-", PersonalAccessToken: "pat-"}

// The API's visibility and access level numbers, as the state holds them
// (collab.PrivateVisibility..., collab.GuestAccess... name them).
const (
	visPrivate, visInternal, visPublic                                 = 0, 10, 20
	levelGuest, levelReporter, levelDeveloper, levelMaster, levelOwner = 10, 20, 30, 40, 50
)

func validVisibility(v int) bool { return v == visPrivate || v == visInternal || v == visPublic }

func validLevel(l int) bool { return l >= levelGuest && l <= levelOwner && l%10 == 0 }

// User is what AddUser returns: the new user's id, name and private token.
type User struct {
	ID       int
	Username string
	Token    string
}

// AddUser creates an active user with a private token. An empty or taken
// username is a mistake (see Err) and returns the zero User.
func (s *Server) AddUser(username string, admin bool) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.TrimSpace(username) == "" || s.findUser(username) != nil || isDigits(username) {
		s.misuse("AddUser: username %q is empty, all digits or taken", username)
		return User{}
	}
	u := &user{
		id: s.newID(), username: username, name: strings.ToUpper(username[:1]) + username[1:],
		email: username + "@example.com", state: "active", admin: admin, createdAt: s.now(),
		canCreateGroup: true,
	}
	u.namespaceID = s.newID()
	s.users[u.id] = u
	tok := s.newToken(u.id, PrivateToken)
	return User{ID: u.id, Username: username, Token: tok}
}

// AddToken gives an existing user another token of the given kind. An
// unknown user or kind is a mistake (see Err) and returns "".
//
// Deprecated: Use Seed.Token, which takes the User. This helper goes in the
// next minor release.
func (s *Server) AddToken(userID int, kind TokenKind) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, known := tokenPrefix[kind]; !known || s.users[userID] == nil {
		s.misuse("AddToken: no user %d or unknown token kind %d", userID, kind)
		return ""
	}
	return s.newToken(userID, kind)
}

func (s *Server) newToken(userID int, kind TokenKind) string {
	tok := tokenPrefix[kind] + randomHex(12)
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

// faultFor consumes one FailNext failure, if any is left, for a request
// that is not to the control API.
func (s *Server) faultFor(control bool) int {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	if control || s.faultsLeft <= 0 {
		return 0
	}
	s.faultsLeft--
	return s.faultStatus
}

// authenticate finds the caller from any of the three token kinds, in a
// header or a parameter, then applies sudo.
func (s *Server) authenticate(c *call) error {
	q := c.form
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
		return errUnauthorized
	}
	c.user = s.users[t.userID]
	sudo := c.r.Header.Get("SUDO")
	if sudo == "" {
		sudo = q.Get("sudo")
	}
	if sudo == "" {
		return nil
	}
	if !c.user.admin {
		return errStatus(http.StatusForbidden, "403 Forbidden: Must be admin to use sudo")
	}
	target := s.findUser(sudo)
	if target == nil {
		return errStatus(http.StatusNotFound, "404 No user id or username for: "+sudo+" Not Found")
	}
	c.user = target
	return nil
}

// findUser resolves an id (all digits) or a username.
func (s *Server) findUser(key string) *user {
	if isDigits(key) {
		return s.users[atoi(key)]
	}
	for _, u := range s.users {
		if u.username == key {
			return u
		}
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" || len(s) > 18 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// atoi reads a string of digits (see isDigits); anything else is 0.
func atoi(s string) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0
		}
		n = n*10 + int(r-'0')
	}
	return n
}
