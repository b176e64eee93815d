package collab_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

// TestPauseHoldsEveryRequest: 64 goroutines call without pause and without
// retries, so that only the client's pause keeps a goroutine that got a 429
// from calling again at once; the fake answers 429 with Retry-After: 1 once
// its per-token budget is spent. From the fake's request log: until that
// second is over, the only requests that arrive are those that had left the
// client before it read the 429. (Without the pause, thousands arrive.)
func TestPauseHoldsEveryRequest(t *testing.T) {
	srv := collabtest.NewTestServer(t, collabtest.WithRateLimit(10, 10))
	rt := &leaveLog{next: http.DefaultTransport.(*http.Transport).Clone(), left: map[string]time.Time{}}
	rt.next.MaxIdleConnsPerHost = 64
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(watched.Secret(srv.AdminToken)), collab.WithHTTPClient(&http.Client{Transport: rt}),
		collab.WithRetry(collab.RetryPolicy{MaxRetries: 0, MinWait: 10 * time.Millisecond, MaxWait: 5 * time.Second}))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	start := time.Now()
	// Calls go on until 1.3 s after the client read the first 429 (or,
	// as a guard, 20 s after the start).
	going := func() bool {
		got := rt.first429()
		return time.Since(start) < 20*time.Second && (got.IsZero() || time.Since(got) < 1300*time.Millisecond)
	}
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 1; going(); k++ {
				_, _, err := c.Projects.Get(context.Background(), g*1000+k) // a path per request; 404s are fine
				if !errors.Is(err, collab.ErrTooManyRequests) {
					assert.ErrorIs(t, err, collab.ErrNotFound)
				}
			}
		}()
	}
	wg.Wait()

	log := srv.Requests()
	first := -1
	for i, e := range log {
		if e.Status == http.StatusTooManyRequests {
			first = i
			break
		}
	}
	require.GreaterOrEqual(t, first, 0, "the budget was spent")
	t429 := log[first].Time
	received := rt.first429()
	var inWindow, late, after int
	for _, e := range log[first+1:] {
		switch {
		case !e.Time.Before(t429.Add(time.Second)):
			after++
		case rt.leftAt(e.Path).Before(received):
			inWindow++
		default:
			inWindow++
			late++
			t.Logf("%s arrived %v after the 429 and left after the client read it", e.Path, e.Time.Sub(t429))
		}
	}
	// The transport sees the 429 a moment before the governor does; a
	// request that passed the gate in between leaves late.
	assert.LessOrEqual(t, late, 8, "requests that left after the client read the 429")
	assert.LessOrEqual(t, inWindow, 63, "at most the requests in flight arrive during the pause")
	assert.Positive(t, after, "calls go on once the pause is over")
}

// leaveLog is a transport that notes when each path first left the client
// and when the first 429 came back to it.
type leaveLog struct {
	next *http.Transport
	mu   sync.Mutex
	left map[string]time.Time
	got  time.Time
}

func (l *leaveLog) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	if _, ok := l.left[req.URL.EscapedPath()]; !ok {
		l.left[req.URL.EscapedPath()] = time.Now()
	}
	l.mu.Unlock()
	resp, err := l.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		l.mu.Lock()
		if l.got.IsZero() {
			l.got = time.Now()
		}
		l.mu.Unlock()
	}
	return resp, err
}

func (l *leaveLog) CloseIdleConnections() { l.next.CloseIdleConnections() }

func (l *leaveLog) leftAt(path string) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.left[path]
}

func (l *leaveLog) first429() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.got
}
