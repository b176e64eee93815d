package collab

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// SharedLimiter is a request budget shared by clients in several
// processes, set with WithSharedLimiter. The redis/redislimit package
// provides one backed by Redis. Its methods are called from many goroutines
// at once.
type SharedLimiter interface {
	// Reserve takes one request from the shared budget and says how long
	// the caller must wait before sending it: 0 to send at once. A pause
	// set by any sharer is part of that wait. It returns an error only
	// when ctx ends; a limiter that loses its backing store falls back to
	// a local budget.
	Reserve(ctx context.Context) (time.Duration, error)
	// Pause asks every sharer to send nothing before until, because the
	// server answered 429 or 503 with Retry-After.
	Pause(ctx context.Context, until time.Time)
}

// WithRateLimit sends at most rps requests per second, with bursts of up
// to burst requests, counting every attempt (retries included). The limit
// is shared by the client, its Sudo copies and the clients made from it
// with ForAPIPath. When the server answers 429, the rate is halved (at most
// once a second) and then climbs back linearly, by a tenth of rps each
// second, never above rps.
func WithRateLimit(rps float64, burst int) ClientOption {
	bad := !(rps > 0) || burst < 1
	return option(func(c *clientConfig) { c.rate, c.burst = rps, burst }, bad, "WithRateLimit", "needs a positive rate and a burst of at least 1, got %v and %d", rps, burst)
}

// WithConcurrencyLimit lets at most n requests be in flight at once, shared
// like WithRateLimit. A request holds its place until its response body is
// closed, so a download streamed with BareDo counts until it is closed.
func WithConcurrencyLimit(n int) ClientOption {
	return option(func(c *clientConfig) { c.concurrency = n }, n < 1, "WithConcurrencyLimit", "must be at least 1, got %d", n)
}

// WithSharedLimiter takes every request from l's budget too, on top of any
// WithRateLimit, and tells l about every pause the server asks for, so that
// processes sharing l pause together.
func WithSharedLimiter(l SharedLimiter) ClientOption {
	return option(func(c *clientConfig) { c.shared = l }, l == nil, "WithSharedLimiter", "is nil")
}

// governor holds a client's limits and the pause the server asked for. A
// Client and every copy of it share one. With no limit set, a request
// costs it one atomic load. A nil governor lets everything through; only
// the benchmark that measures the governor's cost uses one.
type governor struct {
	pauseUntil atomic.Int64  // unix nanoseconds; 0 when no pause was ever set
	maxPause   time.Duration // the retry policy's MaxWait: Retry-After is honoured up to it
	minPause   time.Duration // a 429 without Retry-After pauses this long
	rate       *aimd         // nil without WithRateLimit
	slots      chan struct{} // nil without WithConcurrencyLimit
	shared     SharedLimiter // nil without WithSharedLimiter
	logger     *slog.Logger
}

func newGovernor(cfg *clientConfig) *governor {
	g := &governor{shared: cfg.shared, logger: cfg.logger, maxPause: cfg.retry.MaxWait, minPause: cfg.retry.MinWait}
	if cfg.rate > 0 {
		g.rate = newAIMD(cfg.rate, cfg.burst)
	}
	if cfg.concurrency > 0 {
		g.slots = make(chan struct{}, cfg.concurrency)
	}
	return g
}

// acquire waits until the call may send its next attempt: past any pause,
// with a free slot and a token of each budget. It returns how long it
// waited. On error (ctx ended) it holds no slot.
func (g *governor) acquire(ctx context.Context) (time.Duration, error) {
	if g == nil || g.rate == nil && g.slots == nil && g.shared == nil && g.pauseUntil.Load() == 0 {
		return 0, nil
	}
	var waited time.Duration
	if err := g.waitPause(ctx, &waited); err != nil {
		return waited, err
	}
	if g.slots != nil {
		if err := g.takeSlot(ctx, &waited); err != nil {
			return waited, err
		}
	}
	err := g.takeTokens(ctx, &waited)
	if err == nil {
		// A pause may have begun while the call queued: it holds the call
		// too, which is what stops queued requests after a 429.
		err = g.waitPause(ctx, &waited)
	}
	if err != nil {
		g.release()
	}
	return waited, err
}

func (g *governor) takeSlot(ctx context.Context, waited *time.Duration) error {
	select {
	case g.slots <- struct{}{}:
		return nil
	default:
	}
	start := time.Now()
	defer func() { *waited += time.Since(start) }()
	select {
	case g.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *governor) takeTokens(ctx context.Context, waited *time.Duration) error {
	if g.rate != nil {
		r := g.rate.lim.Reserve()
		if err := sleep(ctx, r.Delay(), waited); err != nil {
			r.Cancel()
			return err
		}
	}
	if g.shared != nil {
		d, err := g.shared.Reserve(ctx)
		if err == nil {
			err = sleep(ctx, d, waited)
		}
		return err
	}
	return nil
}

// waitPause sleeps until no pause is in force; a pause set while it
// sleeps extends the sleep.
func (g *governor) waitPause(ctx context.Context, waited *time.Duration) error {
	for {
		until := g.pauseUntil.Load()
		if until == 0 {
			return nil
		}
		d := time.Until(time.Unix(0, until))
		if d <= 0 {
			g.pauseUntil.CompareAndSwap(until, 0)
			return nil
		}
		if err := sleep(ctx, d, waited); err != nil {
			return err
		}
	}
}

// release gives back the slot acquire took.
func (g *governor) release() {
	if g.slots != nil {
		<-g.slots
	}
}

// hold makes resp's body give back the call's slot when it is closed.
func (g *governor) hold(resp *http.Response) {
	if g == nil || g.slots == nil {
		return
	}
	if resp == nil {
		g.release()
		return
	}
	resp.Body = &slotBody{ReadCloser: resp.Body, g: g}
}

// slotBody releases a concurrency slot once, when the body is closed.
type slotBody struct {
	io.ReadCloser
	g    *governor
	once sync.Once
}

func (b *slotBody) Close() error {
	b.once.Do(b.g.release)
	return b.ReadCloser.Close()
}

// settle learns from a response: a 429, or a 503 with Retry-After, pauses
// every request of the client (and of the shared limiter's other users),
// and a 429 also lowers the rate; any other answer lets the rate recover.
func (g *governor) settle(ctx context.Context, resp *http.Response) {
	if g == nil || resp == nil {
		return
	}
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		if g.rate != nil {
			g.rate.recover(time.Now())
		}
		return
	}
	ra, hasRA := retryAfter(resp.Header.Get("Retry-After"), time.Now())
	if resp.StatusCode == http.StatusServiceUnavailable && !hasRA {
		return
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		if !hasRA {
			ra = g.minPause
		}
		if g.rate != nil {
			g.rate.cut(time.Now())
		}
	}
	g.pause(ctx, min(ra, g.maxPause))
}

// pause holds every request until d from now, unless a longer pause is
// already in force.
func (g *governor) pause(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	until := time.Now().Add(d)
	for {
		cur := g.pauseUntil.Load()
		if cur >= until.UnixNano() {
			break
		}
		if g.pauseUntil.CompareAndSwap(cur, until.UnixNano()) {
			if g.logger != nil {
				ci, _ := CallInfoFrom(ctx)
				g.logger.InfoContext(ctx, "collab: pausing every request as the server asked",
					"method", ci.Method, "route", ci.Route, "wait", d)
			}
			break
		}
	}
	if g.shared != nil {
		g.shared.Pause(context.WithoutCancel(ctx), until)
	}
}

// sleep waits d, or until ctx ends, adding the time waited to waited.
func sleep(ctx context.Context, d time.Duration, waited *time.Duration) error {
	if d <= 0 {
		return nil
	}
	start := time.Now()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		*waited += time.Since(start)
		return nil
	case <-ctx.Done():
		*waited += time.Since(start)
		return ctx.Err()
	}
}

// AIMD constants: a 429 halves the rate, at most once per cutEvery; the
// rate climbs back by recoverShare of the user's limit per second; it
// never goes below floorShare of that limit.
const (
	cutEvery     = time.Second
	recoverShare = 0.1
	floorShare   = 1.0 / 32
)

// aimd is a rate limit that backs off multiplicatively on 429 and
// recovers additively, never above the user's limit.
type aimd struct {
	lim     *rate.Limiter
	max     float64
	lowered atomic.Bool // the rate is below max: successes must raise it

	mu      sync.Mutex
	cur     float64
	lastCut time.Time
	lastAdj time.Time
}

func newAIMD(rps float64, burst int) *aimd {
	return &aimd{lim: rate.NewLimiter(rate.Limit(rps), burst), max: rps, cur: rps}
}

func (a *aimd) cut(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.lastCut.IsZero() && now.Sub(a.lastCut) < cutEvery {
		return
	}
	a.cur = max(a.cur/2, a.max*floorShare)
	a.lastCut, a.lastAdj = now, now
	a.lim.SetLimitAt(now, rate.Limit(a.cur))
	a.lowered.Store(true)
}

func (a *aimd) recover(now time.Time) {
	if !a.lowered.Load() {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cur = min(a.max, a.cur+a.max*recoverShare*now.Sub(a.lastAdj).Seconds())
	a.lastAdj = now
	a.lim.SetLimitAt(now, rate.Limit(a.cur))
	a.lowered.Store(a.cur < a.max)
}

// current is the rate now allowed, for tests and logs.
func (a *aimd) current() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cur
}
