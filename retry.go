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

// attempt is what the retry policy knows about the request it decides on.
type attempt struct {
	method     string
	rewindable bool
}

// call is one API call on its way: the observer's view of it and what it
// has cost so far. go-retryablehttp runs its attempts through the hooks of
// rc, which see the call through it.
type call struct {
	c        *Client
	ctx      context.Context // carries the CallInfo, and whatever the observer added
	info     CallInfo
	req      *http.Request // the call's request as first sent
	at       attempt
	lastErr  error // the last attempt's error, for the retry event
	attempts int
	waited   time.Duration
	rc       retryablehttp.Client  // the engine, with the call's hooks
	rreq     retryablehttp.Request // req as rc takes it
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

// exchange sends req through the client's limits with go-retryablehttp, as
// often as the retry policy allows, and returns the last response or error.
// The response's body is open. The governor admits the first attempt here
// and each retry in PrepareRetry, so that a retry waits for the limits and
// for any pause the server asked for, like any other request.
func (c *Client) exchange(cl *call, req *http.Request) (*http.Response, error) {
	cl.req = req
	cl.at = attempt{method: req.Method, rewindable: req.Body == nil || req.Body == http.NoBody || req.GetBody != nil}
	if err := cl.admit(); err != nil {
		return nil, err
	}
	cl.rc = retryablehttp.Client{
		HTTPClient:   c.attempt,
		Logger:       nil, // its lines name whole URLs; the hooks log through slog instead
		RetryMax:     c.retry.MaxRetries,
		RetryWaitMin: c.retry.MinWait,
		RetryWaitMax: c.retry.MaxWait,
		CheckRetry:   cl.checkRetry,
		Backoff:      cl.backoff,
		PrepareRetry: cl.prepareRetry,
		// The last response or error as it came, not "giving up after N
		// attempts": the caller decodes the response into an ErrorResponse.
		ErrorHandler: retryablehttp.PassthroughErrorHandler,
	}
	if c.logger != nil {
		cl.rc.RequestLogHook = cl.logAttempt
	}
	// Without a body ReaderFunc retryablehttp leaves req.Body alone: a
	// streamed body is never buffered, and prepareRetry rewinds the others.
	cl.rreq = retryablehttp.Request{Request: req}
	return cl.rc.Do(&cl.rreq)
}

// admit waits until the governor lets the call send its next attempt,
// reporting any wait to the observer.
func (cl *call) admit() error {
	n := cl.attempts + 1
	waited, err := cl.c.gov.acquire(cl.ctx)
	cl.waited += waited
	if waited > 0 {
		cl.event(CallEvent{Kind: EventLimitWait, Attempt: n, Wait: waited})
	}
	if err != nil {
		return err
	}
	cl.attempts = n
	return nil
}

// checkRetry is the CheckRetry hook, run after every attempt: the governor
// learns from the answer (a 429 pauses the client, a concurrency slot goes
// back with the body), then the policy decides. It never returns an error,
// so that the caller gets the attempt's own response or error.
func (cl *call) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	cl.c.gov.hold(resp)
	cl.c.gov.settle(ctx, resp)
	cl.lastErr = err
	return shouldRetry(&cl.at, resp, err), nil
}

// backoff is the Backoff hook, run once a retry is decided: it picks the
// wait and reports the retry. retryablehttp has closed resp's body.
func (cl *call) backoff(lo, hi time.Duration, n int, resp *http.Response) time.Duration {
	wait := backoff(lo, hi, n, resp)
	ev := CallEvent{Kind: EventRetry, Attempt: cl.attempts + 1, Wait: wait}
	if resp != nil {
		ev.Status = resp.StatusCode
	} else {
		ev.Err = wire.Redacted(unwrapURLError(cl.lastErr), cl.c.secretsOf(cl.req))
	}
	cl.event(ev)
	cl.c.logRetry(cl, ev)
	return wait
}

// prepareRetry is the PrepareRetry hook, run after the wait on a fresh
// copy of the request (so that the transport of the last attempt does not
// race with it on the old body): it rewinds the body, then waits for the
// governor.
func (cl *call) prepareRetry(req *http.Request) error {
	if err := rewindBody(req); err != nil {
		return err
	}
	return cl.admit()
}

// rewindBody gives req a fresh copy of its body, for the next attempt.
func rewindBody(req *http.Request) error {
	if req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return err
	}
	req.Body = body
	return nil
}

func unwrapURLError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

// logAttempt is the RequestLogHook, set when the client has a logger and
// run just before each attempt is sent; n counts from 0.
func (cl *call) logAttempt(_ retryablehttp.Logger, req *http.Request, n int) {
	c := cl.c
	if c.logger != nil && c.logger.Enabled(cl.ctx, slog.LevelDebug) {
		c.logger.DebugContext(cl.ctx, "collab: request", "method", cl.info.Method, "route", cl.info.Route,
			"url", wire.RedactURL(req.URL), "attempt", n+1)
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
