package collab

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestLimitOptionsRefuseBadValues(t *testing.T) {
	for _, opt := range []ClientOption{
		WithRateLimit(0, 1), WithRateLimit(-1, 1), WithRateLimit(1, 0), WithConcurrencyLimit(0), WithSharedLimiter(nil),
	} {
		_, err := NewClient("https://collab.example.com", opt)
		assert.ErrorIs(t, err, ErrInvalidArgument)
	}
}

// A rate limit makes calls wait, and says so on the Response and to the
// observer; the wait ends with the context.
func TestRateLimitWaitsAndReports(t *testing.T) {
	rec := &recorder{}
	c, m := newMockClient(t, WithRateLimit(20, 1), WithObserver(rec))
	m.Reply(200, `{"id":1}`)
	var waited time.Duration
	for range 4 {
		_, resp, err := c.Projects.Get(context.Background(), 1)
		require.NoError(t, err)
		waited += resp.Waited
	}
	assert.GreaterOrEqual(t, waited, 100*time.Millisecond, "3 of 4 calls wait about 50 ms each at 20/s")
	_, events, ended := rec.snapshot()
	var total time.Duration
	for _, ev := range events {
		assert.Equal(t, EventLimitWait, ev.Kind)
		assert.Equal(t, 1, ev.Attempt)
		total += ev.Wait
	}
	assert.Equal(t, waited, total)
	assert.Equal(t, waited, ended[1].Waited+ended[2].Waited+ended[3].Waited+ended[0].Waited)

	slow, m2 := newMockClient(t, WithRateLimit(0.01, 1))
	m2.Reply(200, `{"id":1}`)
	_, _, err := slow.Projects.Get(context.Background(), 1)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, err = slow.Projects.Get(ctx, 1)
	var re *RequestError
	require.ErrorAs(t, err, &re)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, 1, m2.Count(), "a call whose context ends in the queue sends nothing")
}

// At most n requests are in flight, for a Client and its Sudo copies together.
func TestConcurrencyLimitSharedWithSudo(t *testing.T) {
	var inFlight, peak atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(5 * time.Millisecond)
		inFlight.Add(-1)
		w.Write([]byte(`{"id":1}`))
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, WithConcurrencyLimit(3), WithoutRetries())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := c
			if i%2 == 0 {
				cl = c.Sudo("someone")
			}
			_, _, err := cl.Projects.Get(context.Background(), 1)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, peak.Load(), int64(3))
	assert.Equal(t, int64(3), peak.Load(), "the limit is reached, not undershot")
}

// A streamed download holds its slot until its body is closed.
func TestConcurrencySlotHeldUntilBodyClosed(t *testing.T) {
	c, m := newMockClient(t, WithConcurrencyLimit(1))
	m.Reply(200, `data`)
	req, err := c.NewRequest(context.Background(), http.MethodGet, "projects/1/builds/2/artifacts", nil)
	require.NoError(t, err)
	resp, err := c.BareDo(req)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, err = c.Projects.Get(ctx, 1)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the only slot is held by the open body")
	require.NoError(t, resp.Body.Close())
	_, _, err = c.Projects.Get(context.Background(), 1)
	var de *DecodeError
	assert.ErrorAs(t, err, &de, "the slot came back: the call was sent (and its body was not a project)")
}

// A 429 with Retry-After pauses the other calls of the client, its Sudo
// copies included; a 503 with Retry-After too, a 503 without it does not.
func TestServerPausePausesEveryCall(t *testing.T) {
	policy := RetryPolicy{MaxRetries: 0, MaxWait: 5 * time.Second}
	for _, tc := range []struct {
		status int
		header []string
		pauses bool
	}{
		{429, []string{"Retry-After", "1"}, true},
		{503, []string{"Retry-After", "1"}, true},
		{503, nil, false},
	} {
		c, m := newMockClient(t, WithRetry(policy))
		m.Reply(tc.status, `{"message":"slow down"}`, tc.header...).Reply(200, `{"id":1}`)
		_, _, err := c.Projects.Get(context.Background(), 1)
		require.Error(t, err)
		_, resp, err := c.Sudo("other").Projects.Get(context.Background(), 1)
		require.NoError(t, err)
		if tc.pauses {
			assert.Greater(t, resp.Waited, 500*time.Millisecond, "%d %v", tc.status, tc.header)
		} else {
			assert.Zero(t, resp.Waited, "%d without Retry-After", tc.status)
		}
	}
}

// Retry-After is honoured up to the policy's MaxWait, also as a pause.
func TestServerPauseCappedByMaxWait(t *testing.T) {
	c, m := newMockClient(t, WithRetry(RetryPolicy{MaxWait: 30 * time.Millisecond}))
	m.Reply(429, `{}`, "Retry-After", "3600").Reply(200, `{"id":1}`)
	_, _, _ = c.Projects.Get(context.Background(), 1)
	_, resp, err := c.Projects.Get(context.Background(), 1)
	require.NoError(t, err)
	assert.Less(t, resp.Waited, time.Second)
	assert.Greater(t, resp.Waited, time.Duration(0))
}

func TestAIMD(t *testing.T) {
	a := newAIMD(40, 1)
	now := time.Now()
	a.cut(now)
	assert.Equal(t, 20.0, a.current())
	a.cut(now.Add(100 * time.Millisecond))
	assert.Equal(t, 20.0, a.current(), "one cut a second: the 429s of one burst count once")
	a.cut(now.Add(1100 * time.Millisecond))
	assert.Equal(t, 10.0, a.current())
	for i := 2; i < 20; i++ {
		a.cut(now.Add(time.Duration(i) * 1100 * time.Millisecond))
	}
	assert.Equal(t, 40.0/32, a.current(), "never below the floor")
	last := now.Add(19 * 1100 * time.Millisecond)
	a.recover(last.Add(time.Second))
	assert.InDelta(t, 40.0/32+4, a.current(), 1e-9, "a tenth of the limit back each second")
	a.recover(last.Add(time.Minute))
	assert.Equal(t, 40.0, a.current(), "never above the user's limit")
	assert.False(t, a.lowered.Load())
	assert.Equal(t, 40.0, float64(a.lim.Limit()))
}

// A run of 429s lowers the client's rate.
func TestRunOf429sLowersRate(t *testing.T) {
	c, m := newMockClient(t, WithRateLimit(1000, 10), WithRetry(RetryPolicy{MaxRetries: 0, MaxWait: time.Millisecond}))
	m.Reply(429, `{}`)
	_, _, _ = c.Projects.Get(context.Background(), 1)
	assert.Equal(t, 500.0, c.gov.rate.current())
	assert.Same(t, c.gov, c.Sudo("x").gov)
	api, err := c.ForAPIPath("ci/api/v1")
	require.NoError(t, err)
	assert.Same(t, c.gov, api.gov, "a client for another API path shares the limits")
	assert.Equal(t, "https://collab.example.com/ci/api/v1/", api.BaseURL().String())
}

// A header value net/http would refuse fails at once, as an argument.
func TestBadHeaderValueFailsAtOnce(t *testing.T) {
	c, m := newMockClient(t, WithRetry(RetryPolicy{MaxRetries: 3, MinWait: time.Second, MaxWait: time.Second}))
	m.Reply(200, `{"id":1}`)
	_, _, err := c.Sudo("root\r\nX-Evil: 1").Projects.Get(context.Background(), 1)
	var ae *ArgumentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "header Sudo", ae.Arg)
	assert.NotContains(t, err.Error(), "Evil", "the value is not echoed")
	assert.Zero(t, m.Count())

	req, err := c.NewRequest(context.Background(), http.MethodGet, "projects/1", nil)
	require.NoError(t, err)
	req.Header.Set("X-Note", "a\nb")
	_, err = c.Do(req, nil)
	assert.ErrorAs(t, err, &ae)
	assert.Zero(t, m.Count())
}

// 100 short-lived clients, each closed, leave no connection or goroutine.
func TestCloseLeavesNoGoroutines(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"id":1}`))
	}))
	defer srv.Close()
	before := goleak.IgnoreCurrent()
	for range 100 {
		c, err := NewClient(srv.URL, WithoutRetries())
		require.NoError(t, err)
		_, _, err = c.Projects.Get(context.Background(), 1)
		require.NoError(t, err)
		require.NoError(t, c.Close())
	}
	srv.CloseClientConnections()
	goleak.VerifyNone(t, before)
}
