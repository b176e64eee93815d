package collab

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/collabsvc/collab/internal/wire"
	"github.com/hashicorp/go-retryablehttp"
)

// attempt travels in the request context so that the retry policy, which
// retryablehttp calls without the request, knows what it is deciding about.
type attempt struct {
	method     string
	url        *url.URL
	rewindable bool
}

type attemptKey struct{}

func newRetryClient(hc *http.Client, p RetryPolicy, logger *slog.Logger) *retryablehttp.Client {
	return &retryablehttp.Client{
		HTTPClient:   hc,
		Logger:       nil, // retryablehttp's own logger is silenced; we log through slog below
		RetryMax:     p.MaxRetries,
		RetryWaitMin: p.MinWait,
		RetryWaitMax: p.MaxWait,
		CheckRetry:   retryCheck(logger),
		Backoff:      backoff,
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
		PrepareRetry: rewindBody,
		RequestLogHook: func(_ retryablehttp.Logger, r *http.Request, n int) {
			if logger != nil && logger.Enabled(r.Context(), slog.LevelDebug) {
				logger.DebugContext(r.Context(), "collab: request", "method", r.Method, "url", wire.RedactURL(r.URL), "attempt", n+1)
			}
		},
	}
}

// rewindBody gives a retried request a fresh copy of its body.
func rewindBody(r *http.Request) error {
	if r.GetBody == nil {
		return nil
	}
	body, err := r.GetBody()
	if err != nil {
		return err
	}
	r.Body = body
	return nil
}

func retryCheck(logger *slog.Logger) retryablehttp.CheckRetry {
	return func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		info, _ := ctx.Value(attemptKey{}).(*attempt)
		if info == nil {
			return false, nil
		}
		retry := shouldRetry(info, resp, err)
		if retry && logger != nil && logger.Enabled(ctx, slog.LevelDebug) {
			reason := "connection error"
			if resp != nil {
				reason = strconv.Itoa(resp.StatusCode) // not Status: its text is the server's
			}
			logger.DebugContext(ctx, "collab: retrying", "method", info.method, "url", wire.RedactURL(info.url), "reason", reason)
		}
		return retry, nil
	}
}

// shouldRetry is the policy: idempotent methods are retried on
// connection errors and on 429/500/502/503/504; POST and PATCH only on 429 or
// when the request provably never left (a refused or failed dial), so that a
// write is never duplicated. A body that cannot be rewound is never resent.
func shouldRetry(info *attempt, resp *http.Response, err error) bool {
	if !info.rewindable {
		return false
	}
	idempotent := info.method != http.MethodPost && info.method != http.MethodPatch
	if err != nil {
		var refused *redirectError
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &refused) {
			return false
		}
		return idempotent || neverSent(err)
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		return true
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return idempotent
	}
	return false
}

// neverSent reports errors raised before any byte of the request was written.
func neverSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED)
}

// backoff honours Retry-After (seconds or an HTTP date) up to max, and otherwise
// waits min*2^n with full jitter in its upper half, capped at max.
func backoff(lo, hi time.Duration, n int, resp *http.Response) time.Duration {
	if resp != nil {
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return max(0, min(d, hi))
		}
	}
	if lo <= 0 {
		return 0
	}
	d := lo << min(n, 30)
	if d <= 0 || d > hi {
		d = hi
	}
	half := d / 2
	return half + rand.N(half+1)
}

func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.Sub(now), true
	}
	return 0, false
}
