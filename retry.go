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
)

// attempt is what the retry policy knows about the request it decides on.
type attempt struct {
	method     string
	rewindable bool
}

// call is one API call on its way: the observer's view of it and what it
// has cost so far.
type call struct {
	c        *Client
	ctx      context.Context // carries the CallInfo, and whatever the observer added
	info     CallInfo
	attempts int
	waited   time.Duration
}

// startCall names req's call, puts that name in its context for the
// transport, and tells the observer. tmpl is the route template, "" for a
// request built by hand, which is then named by the route it matches.
func (c *Client) startCall(req *http.Request, tmpl string) (*call, *http.Request) {
	if tmpl == "" {
		tmpl = c.matchTemplate(req.URL)
	}
	cl := &call{c: c, info: CallInfo{Method: req.Method, Route: tmpl, Host: c.baseURL.Host}}
	ctx := withCallInfo(req.Context(), cl.info)
	if c.observer != nil {
		ctx = c.observer.CallStarted(ctx, cl.info)
	}
	cl.ctx = ctx
	return cl, req.WithContext(ctx)
}

func (cl *call) event(ev CallEvent) {
	if cl.c.observer != nil {
		cl.c.observer.CallEvent(cl.ctx, ev)
	}
}

// end tells the observer how the call ended.
func (cl *call) end(resp *Response, err error) {
	if cl.c.observer == nil {
		return
	}
	end := CallEnd{Attempts: cl.attempts, Waited: cl.waited, Err: err}
	if resp != nil && resp.Response != nil {
		end.Status = resp.StatusCode
	}
	cl.c.observer.CallEnded(cl.ctx, end)
}

// exchange sends req through the client's limits, as often as the retry
// policy allows, and returns the last response or error. The response's
// body is open.
func (c *Client) exchange(cl *call, req *http.Request) (*http.Response, error) {
	at := attempt{method: req.Method, rewindable: req.Body == nil || req.Body == http.NoBody || req.GetBody != nil}
	ctx := req.Context()
	for n := 1; ; n++ {
		waited, err := c.gov.acquire(ctx)
		cl.waited += waited
		if waited > 0 {
			cl.event(CallEvent{Kind: EventLimitWait, Attempt: n, Wait: waited})
		}
		if err != nil {
			return nil, err
		}
		cl.attempts = n
		c.logAttempt(cl, req, n)
		resp, err := c.http.Do(req)
		c.gov.hold(resp)
		c.gov.settle(ctx, resp)
		if n > c.retry.MaxRetries || !shouldRetry(&at, resp, err) {
			return resp, err
		}
		wait := backoff(c.retry.MinWait, c.retry.MaxWait, n-1, resp)
		ev := CallEvent{Kind: EventRetry, Attempt: n + 1, Wait: wait}
		if resp != nil {
			ev.Status = resp.StatusCode
			closeBody(resp.Body)
		} else {
			ev.Err = wire.Redacted(unwrapURLError(err), c.secretsOf(req))
		}
		cl.event(ev)
		c.logRetry(cl, ev)
		var slept time.Duration
		if err := sleep(ctx, wait, &slept); err != nil {
			return nil, err
		}
		if req, err = rewound(req); err != nil {
			return nil, err
		}
	}
}

// rewound returns a copy of req with a fresh body, for the next attempt.
// The copy keeps the transport of the last attempt from racing with us on
// the old request's body.
func rewound(req *http.Request) (*http.Request, error) {
	cp := *req
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		cp.Body = body
	}
	return &cp, nil
}

func unwrapURLError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

func (c *Client) logAttempt(cl *call, req *http.Request, n int) {
	if c.logger != nil && c.logger.Enabled(cl.ctx, slog.LevelDebug) {
		c.logger.DebugContext(cl.ctx, "collab: request", "method", cl.info.Method, "route", cl.info.Route,
			"url", wire.RedactURL(req.URL), "attempt", n)
	}
}

func (c *Client) logRetry(cl *call, ev CallEvent) {
	if c.logger == nil || !c.logger.Enabled(cl.ctx, slog.LevelDebug) {
		return
	}
	reason := "connection error"
	if ev.Status != 0 {
		reason = strconv.Itoa(ev.Status) // not the status text: it is the server's
	}
	c.logger.DebugContext(cl.ctx, "collab: retrying", "method", cl.info.Method, "route", cl.info.Route,
		"attempt", ev.Attempt, "reason", reason, "wait", ev.Wait)
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
