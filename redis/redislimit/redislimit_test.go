package redislimit_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/redis/internal/redistest"
	"github.com/collabsvc/collab/redis/redislimit"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRefusesBadInput(t *testing.T) {
	rdb := redistest.Start(t, false).Client(nil)
	for _, tc := range []struct {
		token string
		o     redislimit.Options
	}{
		{"", redislimit.Options{Rate: 1}},
		{"t", redislimit.Options{}},
		{"t", redislimit.Options{Rate: 1, Burst: -1}},
		{"t", redislimit.Options{Rate: 1, FallbackRate: -1}},
	} {
		_, err := redislimit.New(rdb, tc.token, tc.o)
		assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	}
	_, err := redislimit.New(nil, "t", redislimit.Options{Rate: 1})
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)
}

// twoProcesses starts a Redis server and returns the limiters of token of
// two processes (each with a Redis client of its own), and the first's
// client. Everything stops when the test ends.
func twoProcesses(t *testing.T, token string, o redislimit.Options) (la, lb *redislimit.Limiter, a *redis.Client) {
	t.Helper()
	srv := redistest.Start(t, false)
	a, b := srv.Client(nil), srv.Client(nil)
	la, err := redislimit.New(a, token, o)
	require.NoError(t, err)
	lb, err = redislimit.New(b, token, o)
	require.NoError(t, err)
	return la, lb, a
}

// Two limiters of one token (two processes) book one budget: the waits
// they are given space all their requests at the shared rate.
func TestTwoLimitersShareOneBudget(t *testing.T) {
	const token = "tok-shared-1"
	la, lb, a := twoProcesses(t, token, redislimit.Options{Rate: 10, Burst: 2})
	other, err := redislimit.New(a, "tok-other-2", redislimit.Options{Rate: 10, Burst: 2})
	require.NoError(t, err)
	ctx := context.Background()
	var waits []time.Duration
	for i := range 10 {
		l := la
		if i%2 == 1 {
			l = lb
		}
		d, err := l.Reserve(ctx)
		require.NoError(t, err)
		waits = append(waits, d)
	}
	assert.Zero(t, waits[0])
	assert.Zero(t, waits[1], "a burst of 2")
	assert.InDelta(t, 800*time.Millisecond, waits[9], float64(50*time.Millisecond), "the 10th of 10 at 10/s with a burst of 2 goes after 0.8 s")
	for i := 2; i < 10; i++ {
		assert.Greater(t, waits[i], waits[i-1], "each booking comes after the one before, whichever process made it")
	}
	d, err := other.Reserve(ctx)
	require.NoError(t, err)
	assert.Zero(t, d, "another token has a budget of its own")

	keys, err := a.Keys(ctx, "*").Result()
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(token))
	// In braces: Redis Cluster hashes only that part, so the budget's keys
	// share a shard.
	assert.Contains(t, keys, "collab:ratelimit:{"+hex.EncodeToString(sum[:16])+"}")
	for _, k := range keys {
		assert.NotContains(t, k, "tok-", "keys hold a hash of the token, never the token")
	}
}

// A pause halves the shared rate for every process, at most once a second;
// the rate climbs back over the next seconds, and another pause once the
// second is over halves what it has climbed back to.
func TestPauseLowersTheSharedRate(t *testing.T) {
	la, lb, _ := twoProcesses(t, "tok-aimd", redislimit.Options{Rate: 20})
	ctx := context.Background()
	// span books 5 requests of lb and says how far apart the first and the
	// last go, on this clock (each off by one answer's trip from Redis).
	span := func() time.Duration {
		var first, last time.Time
		for i := range 5 {
			d, err := lb.Reserve(ctx)
			require.NoError(t, err)
			last = time.Now().Add(d)
			if i == 0 {
				first = last
			}
		}
		return last.Sub(first)
	}
	ms := float64(time.Millisecond)
	assert.InDelta(t, 200*ms, float64(span()), 40*ms, "at 20/s, 4 intervals of 50 ms")

	la.Pause(ctx, time.Now().Add(time.Millisecond))
	la.Pause(ctx, time.Now().Add(time.Millisecond)) // the same second: no second cut
	assert.InDelta(t, 400*ms, float64(span()), 40*ms, "halved, by one process for the other too")

	time.Sleep(time.Second)
	back := span()
	assert.Less(t, back, 375*time.Millisecond, "the rate climbs back")
	assert.Greater(t, back, 225*time.Millisecond, "gradually: a tenth of the rate a second")

	la.Pause(ctx, time.Now().Add(time.Millisecond))
	assert.Greater(t, span(), 500*time.Millisecond, "a run of 429s lowers it further")
}

// A pause from one process holds every process's next booking.
func TestPauseReachesEveryProcess(t *testing.T) {
	la, lb, _ := twoProcesses(t, "tok-p", redislimit.Options{Rate: 100})
	la.Pause(context.Background(), time.Now().Add(2*time.Second))
	d, err := lb.Reserve(context.Background())
	t0 := time.Now()
	require.NoError(t, err)
	assert.InDelta(t, 2*time.Second, d, float64(100*time.Millisecond))
	d2, err := lb.Reserve(context.Background())
	t1 := time.Now()
	require.NoError(t, err)
	// The two bookings' times, on this clock; each is late by the time its
	// answer took to come back from Redis, so the spacing (20 ms: the pause
	// halved the rate) is checked loosely.
	spacing := t1.Add(d2).Sub(t0.Add(d))
	assert.Greater(t, spacing, 10*time.Millisecond, "after the pause, requests are spaced, not let go at once")
	assert.Less(t, spacing, 60*time.Millisecond)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = lb.Reserve(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

// Without Redis the limiter falls back to its local budget, says so once,
// and never names the token.
func TestFallbackWhenRedisIsLost(t *testing.T) {
	srv := redistest.Start(t, false)
	rdb := srv.Client(nil)
	var logs bytes.Buffer
	const token = "tok-fallback-3"
	l, err := redislimit.New(rdb, token, redislimit.Options{Rate: 20, Processes: 2, Timeout: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	_, err = l.Reserve(context.Background())
	require.NoError(t, err)
	srv.Kill()

	var waits []time.Duration
	for range 4 {
		d, err := l.Reserve(context.Background())
		require.NoError(t, err, "a lost Redis is no error")
		waits = append(waits, d)
	}
	assert.InDelta(t, 300*time.Millisecond, waits[3], float64(30*time.Millisecond), "the local budget is Rate/Processes, 10/s")
	l.Pause(context.Background(), time.Now().Add(time.Second))
	d, err := l.Reserve(context.Background())
	require.NoError(t, err)
	assert.Greater(t, d, 800*time.Millisecond, "a pause holds the local budget too")

	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "Redis unreachable, using the local limiter"), out)
	assert.NotContains(t, out, token)
}

// Through a collab.Client against the fake: the shared limiter paces the
// calls and a 429's pause reaches the other client's limiter.
func TestWithCollabClient(t *testing.T) {
	redisSrv := redistest.Start(t, false)
	fake := collabtest.NewTestServer(t)
	var clients []*collab.Client
	for range 2 {
		rdb := redisSrv.Client(nil)
		lim, err := redislimit.New(rdb, fake.AdminToken, redislimit.Options{Rate: 20})
		require.NoError(t, err)
		c, err := collab.NewClient(fake.URL, collab.WithPrivateToken(fake.AdminToken), collab.WithSharedLimiter(lim),
			collab.WithRetry(collab.RetryPolicy{MaxWait: 1500 * time.Millisecond}))
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		clients = append(clients, c)
	}
	for i := range 6 {
		_, _, err := clients[i%2].Projects.List(context.Background(), nil)
		require.NoError(t, err)
	}
	log := fake.Requests()
	require.Len(t, log, 6)
	assert.Greater(t, log[5].Time.Sub(log[0].Time), 230*time.Millisecond, "6 calls at 20/s across two clients span 0.25 s")

	fake.SetRateLimit(0.5, 1)
	_, _, err := clients[0].Projects.List(context.Background(), nil) // spends the fake's budget
	require.NoError(t, err)
	_, _, err = clients[0].Projects.List(context.Background(), nil)
	require.ErrorIs(t, err, collab.ErrTooManyRequests, "no retries in this policy")
	fake.SetRateLimit(0, 0)
	_, resp, err := clients[1].Projects.List(context.Background(), nil)
	require.NoError(t, err)
	assert.Greater(t, resp.Waited, 500*time.Millisecond, "the other client paused for the Retry-After")
}
