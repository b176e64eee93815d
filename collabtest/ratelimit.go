package collabtest

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// WithRateLimit limits every token to rps requests per second, with
// bursts of up to burst, as a server with a rate limit does: a request past
// the limit is answered 429 with a Retry-After of the whole seconds until
// the token may send again, and changes nothing. Requests without a token
// and the control API are not limited. SetRateLimit changes it later.
func WithRateLimit(rps float64, burst int) Option {
	return func(c *config) { c.rate, c.burst = rps, burst }
}

// SetRateLimit limits every token to rps requests per second with bursts
// of up to burst (see WithRateLimit); rps 0 removes the limit. Each token's
// budget starts full.
func (s *Server) SetRateLimit(rps float64, burst int) {
	s.limits.set(rps, burst)
}

// LoggedRequest is one request in the fake's request log.
type LoggedRequest struct {
	Time   time.Time // when it arrived
	Method string
	Path   string // escaped, without the query
	Status int    // the status it was answered
	Token  string // the first 12 hex digits of the SHA-256 of its token, "" when none
}

// maxLogged bounds the request log; past it the oldest half is dropped.
const maxLogged = 1 << 17

// Requests returns the request log: every request to the service (not to
// the control API) in the order it arrived, with when it arrived and how it
// was answered, so that a test can check when a client sent what. It holds
// the last 65536 to 131072 requests.
func (s *Server) Requests() []LoggedRequest {
	s.limits.mu.Lock()
	defer s.limits.mu.Unlock()
	return append([]LoggedRequest(nil), s.limits.log...)
}

// ClearRequests empties the request log.
func (s *Server) ClearRequests() {
	s.limits.mu.Lock()
	s.limits.log = nil
	s.limits.mu.Unlock()
}

// limiter holds the per-token rate limit and the request log.
type limiter struct {
	mu      sync.Mutex
	rps     float64
	burst   int
	buckets map[string]*rate.Limiter // by token hash
	log     []LoggedRequest
}

func (l *limiter) set(rps float64, burst int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rps, l.burst, l.buckets = max(rps, 0), max(burst, 1), map[string]*rate.Limiter{}
}

// admit takes a token's request from its budget; when it is over, it
// returns the Retry-After to answer.
func (l *limiter) admit(tokenHash string, now time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rps <= 0 || tokenHash == "" {
		return 0, true
	}
	b := l.buckets[tokenHash]
	if b == nil {
		b = rate.NewLimiter(rate.Limit(l.rps), l.burst)
		l.buckets[tokenHash] = b
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 || !r.OK() {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

func (l *limiter) record(e LoggedRequest) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.log) >= maxLogged {
		l.log = append(l.log[:0], l.log[maxLogged/2:]...)
	}
	l.log = append(l.log, e)
}

// serveLimited logs each request to the service and answers 429 to one
// past its token's rate limit, before the fake sees it.
func (s *Server) serveLimited(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, ControlPrefix) {
		s.serveHTTP(w, r)
		return
	}
	now := time.Now()
	e := LoggedRequest{Time: now, Method: r.Method, Path: r.URL.EscapedPath(), Token: tokenHash(requestToken(r))}
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	if wait, ok := s.limits.admit(e.Token, now); !ok {
		secs := int(math.Ceil(wait.Seconds()))
		sw.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		writeError(sw, errStatus(http.StatusTooManyRequests, "429 Too Many Requests: Retry later"))
	} else {
		s.serveHTTP(sw, r)
	}
	e.Status = sw.status
	s.limits.record(e)
}

// requestToken finds a request's token where authenticate looks for it,
// without reading a body.
func requestToken(r *http.Request) string {
	if t := r.Header.Get("PRIVATE-TOKEN"); t != "" {
		return t
	}
	if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(b)
	}
	q := r.URL.Query()
	if t := q.Get("private_token"); t != "" {
		return t
	}
	return q.Get("access_token")
}

func tokenHash(token string) string {
	if token == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:6])
}

// statusWriter remembers the status a request was answered.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
