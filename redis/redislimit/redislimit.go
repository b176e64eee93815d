// Package redislimit shares one request budget among the collab clients of
// several processes, through Redis: set it on each client with
// collab.WithSharedLimiter.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	lim, err := redislimit.New(rdb, token, redislimit.Options{Rate: 50, Burst: 5})
//	c, err := collab.NewClient(url, collab.WithPrivateToken(token), collab.WithSharedLimiter(lim))
//
// Every process that builds its limiter with the same token takes its
// requests from one budget of Rate requests per second, spaced evenly with
// bursts of up to Burst, whatever the number of processes and goroutines.
// When the server answers one of them 429 (or 503 with Retry-After), all of
// them pause for the time the server asked, and the budget's rate is halved
// (at most once a second, never below Rate/32); it then climbs back by a
// tenth of Rate each second, as the rate of collab.WithRateLimit does.
//
// The budget lives under a key made from a SHA-256 hash of the token, never
// the token itself; Redis's clock is the only clock, so the hosts' clocks
// need not agree. When Redis cannot be reached, each process falls back to
// a local budget of FallbackRate and logs it once; it logs again when Redis
// answers again.
package redislimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/collabsvc/collab"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"
)

// Options configures a Limiter.
type Options struct {
	// Rate is the budget of all processes together, in requests per second.
	Rate float64
	// Burst is how many requests may go at once after a quiet spell; 1
	// spaces every request evenly. 0 means 1.
	Burst int
	// FallbackRate is the local budget of each process while Redis cannot
	// be reached; 0 means Rate divided by Processes.
	FallbackRate float64
	// Processes is how many processes are expected to share the budget;
	// it only sets the default FallbackRate. 0 means 1.
	Processes int
	// Prefix starts every key; the default is "collab:ratelimit:". The
	// token's hash follows in braces, so that Redis Cluster keeps a
	// budget's keys on one shard, as its scripts need.
	Prefix string
	// Timeout bounds each Redis call; the default is 250 ms.
	Timeout time.Duration
	// Logger receives the line saying that Redis was lost or is back;
	// the default is slog.Default().
	Logger *slog.Logger
}

// Limiter is a collab.SharedLimiter kept in Redis. It is safe for
// concurrent use.
type Limiter struct {
	rdb      redis.Scripter
	keys     []string // the budget's key, the pause's, then the slowdown's
	interval int64    // microseconds between two requests
	tau      int64    // microseconds of burst: Burst intervals
	timeout  time.Duration
	logger   *slog.Logger

	local     *rate.Limiter
	localHold atomic.Int64 // unix ns: a pause kept locally while Redis is away

	down      atomic.Bool
	mu        sync.Mutex
	lastProbe time.Time // while down, Redis is tried again once a second
}

var _ collab.SharedLimiter = (*Limiter)(nil)

// New returns the limiter for token's budget in rdb.
func New(rdb redis.Scripter, token string, o Options) (*Limiter, error) {
	switch {
	case rdb == nil:
		return nil, &collab.ArgumentError{Arg: "rdb", Reason: "is nil"}
	case token == "":
		return nil, &collab.ArgumentError{Arg: "token", Reason: "is empty"}
	case !(o.Rate > 0) || o.Burst < 0 || o.FallbackRate < 0 || o.Processes < 0:
		return nil, &collab.ArgumentError{Arg: "Options", Reason: "needs a positive Rate and no negative Burst, FallbackRate or Processes"}
	}
	o.Burst, o.Processes = max(o.Burst, 1), max(o.Processes, 1)
	if o.FallbackRate == 0 {
		o.FallbackRate = o.Rate / float64(o.Processes)
	}
	if o.Prefix == "" {
		o.Prefix = "collab:ratelimit:"
	}
	if o.Timeout <= 0 {
		o.Timeout = 250 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	sum := sha256.Sum256([]byte(token))
	key := o.Prefix + "{" + hex.EncodeToString(sum[:16]) + "}"
	interval := max(int64(1e6/o.Rate), 1)
	return &Limiter{
		rdb: rdb, keys: []string{key, key + ":pause", key + ":slow"}, interval: interval, tau: interval * int64(o.Burst),
		timeout: o.Timeout, logger: o.Logger, local: rate.NewLimiter(rate.Limit(o.FallbackRate), o.Burst),
	}, nil
}

// The shared AIMD: a pause halves the budget's share of Rate, at most once
// per cutEvery and never below floorShare; the share then climbs back by
// recoverShare each second. Redis keeps the share right after the last cut
// and the time of that cut; the key expires once the share is back to 1.
const (
	cutEvery     = time.Second
	recoverShare = 0.1
	floorShare   = 1.0 / 32
)

// shareLua computes, by Redis's clock, the share of Rate in force: 1
// without a slowdown key. ARGV[3] is recoverShare.
const shareLua = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local slow = redis.call('HMGET', KEYS[3], 'share', 'at')
local share, cutAt = 1, nil
if slow[1] and slow[2] then
  cutAt = tonumber(slow[2])
  share = math.min(1, tonumber(slow[1]) + tonumber(ARGV[3]) * (now - cutAt) / 1000000)
end
`

// reserveScript books the next request of the budget (GCRA) and answers
// how many microseconds the caller must wait, by Redis's clock. A pause
// pushes the booking past its end, spaced from there; a slowdown spaces
// bookings wider.
var reserveScript = redis.NewScript(shareLua + `
local interval, tau = tonumber(ARGV[1]) / share, tonumber(ARGV[2]) / share
local base = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
local pause = tonumber(redis.call('GET', KEYS[2]) or '0')
if pause > now then base = math.max(base, pause + tau - interval) end
local tat = base + interval
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.floor((tat - now) / 1000) + 1000)
return math.max(0, tat - tau - now)
`)

// pauseScript makes every sharer wait ARGV[1] microseconds from now, by
// Redis's clock, unless a longer pause is set, and cuts the share of Rate
// (ARGV[2] is cutEvery in microseconds, ARGV[4] floorShare).
var pauseScript = redis.NewScript(shareLua + `
local untilus = now + tonumber(ARGV[1])
if untilus > tonumber(redis.call('GET', KEYS[2]) or '0') then
  redis.call('SET', KEYS[2], string.format('%.0f', untilus), 'PX', math.floor(tonumber(ARGV[1]) / 1000) + 1000)
end
if cutAt and now - cutAt < tonumber(ARGV[2]) then return 1 end
share = math.max(share / 2, tonumber(ARGV[4]))
redis.call('HSET', KEYS[3], 'share', string.format('%.6f', share), 'at', string.format('%.0f', now))
redis.call('PEXPIRE', KEYS[3], math.ceil((1 - share) / tonumber(ARGV[3]) * 1000) + 1000)
return 1
`)

// Reserve takes one request from the shared budget and returns how long to
// wait before sending it. It fails only when ctx has ended; when Redis
// fails it answers from the local budget.
func (l *Limiter) Reserve(ctx context.Context) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if l.useRedis() {
		rctx, cancel := context.WithTimeout(ctx, l.timeout)
		us, err := reserveScript.Run(rctx, l.rdb, l.keys, l.interval, l.tau, recoverShare).Int64()
		cancel()
		if err == nil {
			l.up()
			return time.Duration(us) * time.Microsecond, nil
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		l.lost(ctx, err)
	}
	d := l.local.Reserve().Delay()
	if hold := time.Until(time.Unix(0, l.localHold.Load())); hold > d {
		d = hold
	}
	return d, nil
}

// Pause makes every process of the budget send nothing before until, and
// lowers the budget's rate (see the package documentation).
func (l *Limiter) Pause(ctx context.Context, until time.Time) {
	d := time.Until(until)
	if d <= 0 {
		return
	}
	for {
		cur := l.localHold.Load()
		if cur >= until.UnixNano() || l.localHold.CompareAndSwap(cur, until.UnixNano()) {
			break
		}
	}
	if !l.useRedis() {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	if err := pauseScript.Run(rctx, l.rdb, l.keys, d.Microseconds(), cutEvery.Microseconds(), recoverShare, floorShare).Err(); err != nil {
		l.lost(ctx, err)
		return
	}
	l.up()
}

// useRedis says whether to ask Redis: always while it answers, once a
// second while it does not.
func (l *Limiter) useRedis() bool {
	if !l.down.Load() {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.lastProbe) < time.Second {
		return false
	}
	l.lastProbe = time.Now()
	return true
}

func (l *Limiter) lost(ctx context.Context, err error) {
	l.mu.Lock()
	l.lastProbe = time.Now()
	l.mu.Unlock()
	if l.down.CompareAndSwap(false, true) {
		reason := err.Error()
		if errors.Is(err, context.DeadlineExceeded) {
			reason = "no answer within " + l.timeout.String()
		}
		l.logger.WarnContext(ctx, "redislimit: Redis unreachable, using the local limiter", "error", reason)
	}
}

func (l *Limiter) up() {
	if l.down.CompareAndSwap(true, false) {
		l.logger.Info("redislimit: Redis reachable again, sharing the budget")
	}
}
