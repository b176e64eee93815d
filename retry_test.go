package collab

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fastRetry keeps the retry tests quick: four attempts, millisecond waits.
var fastRetry = RetryPolicy{MaxRetries: 3, MinWait: time.Millisecond, MaxWait: 4 * time.Millisecond}

// faultServer answers every request by the fault it is given and records
// the bodies it received.
type faultServer struct {
	*httptest.Server
	attempts atomic.Int64
	mu       sync.Mutex
	bodies   []string
}

func newFaultServer(t *testing.T, fault string) *faultServer {
	t.Helper()
	fs := &faultServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.attempts.Add(1)
		b, _ := io.ReadAll(r.Body)
		fs.mu.Lock()
		fs.bodies = append(fs.bodies, string(b))
		fs.mu.Unlock()
		switch fault {
		case "reset":
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					tc.SetLinger(0)
				}
				conn.Close()
			}
		case "429", "500", "502", "503", "504", "400", "404", "409":
			code := map[string]int{"429": 429, "500": 500, "502": 502, "503": 503, "504": 504, "400": 400, "404": 404, "409": 409}[fault]
			w.WriteHeader(code)
			w.Write([]byte(`{"message":"` + fault + `"}`))
		default:
			w.Write([]byte(`{}`))
		}
	}))
	t.Cleanup(fs.Close)
	return fs
}

func TestRetryTable(t *testing.T) {
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodPost, http.MethodPatch}
	idempotent := map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodPut: true, http.MethodDelete: true}
	faults := []string{"ok", "429", "500", "502", "503", "504", "400", "404", "409", "reset"}
	for _, method := range methods {
		for _, fault := range faults {
			want := 1
			switch {
			case fault == "429":
				want = 4
			case fault == "ok", fault == "400", fault == "404", fault == "409":
				want = 1
			case idempotent[method]:
				want = 4
			}
			t.Run(method+"/"+fault, func(t *testing.T) {
				fs := newFaultServer(t, fault)
				c, err := NewClient(fs.URL, WithRetry(fastRetry))
				require.NoError(t, err)
				_, err = send(context.Background(), c, method, route("projects/%s", 1), &encodeOptions{Title: Ptr("x")}, nil)
				if fault == "ok" {
					require.NoError(t, err)
				} else {
					require.Error(t, err)
				}
				assert.EqualValues(t, want, fs.attempts.Load(), "attempts")
				fs.mu.Lock()
				defer fs.mu.Unlock()
				for _, b := range fs.bodies {
					assert.Equal(t, fs.bodies[0], b, "every attempt sends the same body")
				}
			})
		}
	}
}

func TestRetryRefusedDialIsSafeForPost(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close() // nothing listens: every dial is refused
	var dials atomic.Int64
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, a)
	}}}
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		dials.Store(0)
		c, err := NewClient("http://"+addr, WithRetry(fastRetry), WithHTTPClient(hc))
		require.NoError(t, err)
		_, err = send(context.Background(), c, method, route("projects"), &encodeOptions{Title: Ptr("x")}, nil)
		var re *RequestError
		require.ErrorAs(t, err, &re)
		assert.EqualValues(t, 4, dials.Load(), "%s: a request that never left may be retried", method)
	}
}

func TestRetryNeverResendsAOneShotBody(t *testing.T) {
	fs := newFaultServer(t, "503")
	c, err := NewClient(fs.URL, WithRetry(fastRetry))
	require.NoError(t, err)
	req, err := c.NewRequest(context.Background(), http.MethodPut, "uploads", io.MultiReader(strings.NewReader("stream")))
	require.NoError(t, err)
	_, err = c.Do(req, nil)
	assert.ErrorIs(t, err, ErrServer)
	assert.EqualValues(t, 1, fs.attempts.Load())
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	d, ok := retryAfter("7", now)
	assert.True(t, ok)
	assert.Equal(t, 7*time.Second, d)
	d, ok = retryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now)
	assert.True(t, ok)
	assert.Equal(t, 90*time.Second, d)
	d, ok = retryAfter("99999999999", now)
	assert.True(t, ok)
	assert.Equal(t, 24*time.Hour, d)
	for _, bad := range []string{"", "-1", "soon", "1.5"} {
		_, ok := retryAfter(bad, now)
		assert.False(t, ok, bad)
	}

	resp := &http.Response{Header: http.Header{"Retry-After": {"120"}}}
	assert.Equal(t, 30*time.Second, backoff(time.Second, 30*time.Second, 0, resp), "capped at the max wait")
	resp.Header.Set("Retry-After", "2")
	assert.Equal(t, 2*time.Second, backoff(time.Second, 30*time.Second, 0, resp))
	resp.Header.Set("Retry-After", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat))
	assert.Equal(t, time.Duration(0), backoff(time.Second, 30*time.Second, 0, resp), "a date in the past means now")
	assert.Equal(t, time.Duration(0), backoff(0, 0, 3, nil))
}

func TestBackoffIsExponentialWithJitter(t *testing.T) {
	lo, hi := 100*time.Millisecond, 5*time.Second
	seen := map[time.Duration]bool{}
	for n := 0; n < 8; n++ {
		ceiling := min(lo<<n, hi)
		for i := 0; i < 50; i++ {
			d := backoff(lo, hi, n, nil)
			assert.GreaterOrEqual(t, d, ceiling/2, "attempt %d", n)
			assert.LessOrEqual(t, d, ceiling, "attempt %d", n)
			seen[d] = true
		}
	}
	assert.Greater(t, len(seen), 50, "jitter spreads the waits")
	d := backoff(lo, hi, 62, nil)
	assert.True(t, d >= hi/2 && d <= hi, "huge attempt numbers stay capped, got %v", d)
}

func TestRetryHonoursRetryAfterOverLoopback(t *testing.T) {
	var attempts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if attempts.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte(`{"id": 5}`))
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, WithRetry(RetryPolicy{MaxRetries: 2, MinWait: time.Hour, MaxWait: time.Hour}))
	require.NoError(t, err)
	is, _, err := do[Issue](context.Background(), c, http.MethodGet, route("x"), nil)
	require.NoError(t, err, "Retry-After: 0 overrides the hour-long backoff")
	assert.Equal(t, 5, is.ID)
	assert.EqualValues(t, 2, attempts.Load())
}

func TestRetryWaitEndsWhenContextIsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var attempts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
		cancel() // the client is about to wait an hour
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, WithRetry(RetryPolicy{MaxRetries: 3, MinWait: time.Hour, MaxWait: time.Hour}))
	require.NoError(t, err)
	_, err = send(ctx, c, http.MethodGet, route("x"), nil, nil)
	assert.ErrorIs(t, err, context.Canceled)
	assert.EqualValues(t, 1, attempts.Load())
}

func TestDebugLogsNeverCarryTokens(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	fs := newFaultServer(t, "503")
	for _, opt := range []ClientOption{WithPrivateToken("tok-private-1"), WithOAuthToken("tok-oauth-2")} {
		c, err := NewClient(fs.URL, opt, WithLogger(logger), WithRetry(fastRetry))
		require.NoError(t, err)
		req, err := c.NewRequest(context.Background(), http.MethodGet, "projects?private_token=tok-query-3", nil)
		require.NoError(t, err)
		_, err = c.Do(req, nil)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "tok-")
	}
	out := buf.String()
	assert.Contains(t, out, "collab: request")
	assert.Contains(t, out, "collab: retrying")
	assert.Contains(t, out, "attempt=4")
	for _, secret := range []string{"tok-private-1", "tok-oauth-2", "tok-query-3"} {
		assert.NotContains(t, out, secret)
	}
}

func TestShouldRetryEdges(t *testing.T) {
	info := &attempt{method: http.MethodGet, rewindable: true}
	assert.False(t, shouldRetry(info, nil, context.DeadlineExceeded))
	assert.False(t, shouldRetry(info, nil, &url.Error{Op: "Get", Err: context.Canceled}))
	assert.True(t, shouldRetry(&attempt{method: http.MethodPost, rewindable: true}, nil, &net.DNSError{Err: "no such host"}))
	assert.False(t, shouldRetry(&attempt{method: http.MethodGet}, &http.Response{StatusCode: 503}, nil), "a body that cannot be rewound is sent once")
	assert.Error(t, rewindBody(&http.Request{GetBody: func() (io.ReadCloser, error) { return nil, errors.New("gone") }}))
	require.NoError(t, rewindBody(&http.Request{Method: http.MethodGet}), "no body, nothing to rewind")
	r := &http.Request{Body: http.NoBody, GetBody: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("again")), nil }}
	require.NoError(t, rewindBody(r))
	b, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	assert.Equal(t, "again", string(b))
}

// TestDefaultRetryPolicyCannotBeChanged: each call returns a fresh value,
// so editing one changes no client's default.
func TestDefaultRetryPolicyCannotBeChanged(t *testing.T) {
	p := DefaultRetryPolicy()
	assert.Equal(t, RetryPolicy{MaxRetries: 3, MinWait: 500 * time.Millisecond, MaxWait: 30 * time.Second}, p)
	p.MaxRetries = 99
	assert.Equal(t, 3, DefaultRetryPolicy().MaxRetries)
	c, err := NewClient("https://collab.example.com")
	require.NoError(t, err)
	assert.Equal(t, 3, c.retry.MaxRetries, "a new client retries by the default")
}

// A retry passes the governor like a first attempt: here it waits for the
// rate limit, and the observer sees the retry, then that wait, both before
// attempt 2.
func TestRetryWaitsForTheLimits(t *testing.T) {
	rec := &recorder{}
	c, m := newMockClient(t, WithObserver(rec), WithRateLimit(20, 1),
		WithRetry(RetryPolicy{MaxRetries: 1, MinWait: time.Millisecond, MaxWait: time.Millisecond}))
	m.Reply(503, `{"message":"down"}`).Reply(200, `{"id":1}`)
	_, resp, err := c.Projects.Get(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, 2, m.Count())
	_, events, ended := rec.snapshot()
	require.Len(t, events, 2)
	assert.Equal(t, CallEvent{Kind: EventRetry, Attempt: 2, Wait: events[0].Wait, Status: 503}, events[0])
	assert.Equal(t, EventLimitWait, events[1].Kind)
	assert.Equal(t, 2, events[1].Attempt)
	assert.Greater(t, events[1].Wait, 10*time.Millisecond, "the one token of the burst went to attempt 1")
	assert.Equal(t, []CallEnd{{Status: 200, Attempts: 2, Waited: events[1].Wait}}, ended)
	assert.Equal(t, events[1].Wait, resp.Waited)
}

// idleCounter is a transport that counts the calls of its CloseIdleConnections.
type idleCounter struct {
	http.RoundTripper
	closes atomic.Int64
}

func (ic *idleCounter) CloseIdleConnections() { ic.closes.Add(1) }

// A call that fails, after its retries or during a retry's wait, leaves the
// idle connections of the other calls alone; so does Close, since the
// transport is the caller's.
func TestFailedCallKeepsIdleConnections(t *testing.T) {
	fs := newFaultServer(t, "reset")
	ic := &idleCounter{RoundTripper: http.DefaultTransport.(*http.Transport).Clone()}
	c, err := NewClient(fs.URL, WithRetry(fastRetry), WithHTTPClient(&http.Client{Transport: ic}))
	require.NoError(t, err)
	_, _, err = c.Projects.Get(context.Background(), 1)
	var re *RequestError
	require.ErrorAs(t, err, &re)
	assert.EqualValues(t, 4, fs.attempts.Load())

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	slow, err := NewClient(fs.URL, WithRetry(RetryPolicy{MaxRetries: 1, MinWait: time.Hour, MaxWait: time.Hour}), WithHTTPClient(&http.Client{Transport: ic}))
	require.NoError(t, err)
	_, _, err = slow.Projects.Get(ctx, 1)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Zero(t, ic.closes.Load())

	require.NoError(t, c.Close())
	assert.Zero(t, ic.closes.Load())
	ic.RoundTripper.(*http.Transport).CloseIdleConnections()
}
