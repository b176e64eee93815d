package collab

import (
	"context"
	"time"
)

// CallInfo names an API call by its shape, never by its values: it holds no
// id, name, token, query or body, so that it can name spans and label
// metrics without making them unbounded or leaking a secret.
//
// The route template names each path value after the segment before it, as
// the API documents it: "/projects/:id/merge_requests/:merge_request_id".
// Each page of an iterator is a call of the list's route. A request built
// by hand (NewRequest, then Do or BareDo) is named by the SDK route its
// path matches, or gets Route "" when it matches none.
type CallInfo struct {
	Method string // "GET"
	Route  string // the route template, "/projects/:id/issues"; see below
	Host   string // the server's host, with its port when the URL names one
}

// Name is the call's name for a span or a log line:
// "GET /projects/:id/issues".
func (ci CallInfo) Name() string { return ci.Method + " " + ci.Route }

type callInfoKey struct{}

// withCallInfo returns ctx carrying ci, for the transport and the observer.
func withCallInfo(ctx context.Context, ci CallInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, ci)
}

// CallInfoFrom returns the call that a request's context belongs to. Any
// http.RoundTripper or middleware under the client can read it from
// req.Context() to name what it records by route template.
func CallInfoFrom(ctx context.Context) (CallInfo, bool) {
	ci, ok := ctx.Value(callInfoKey{}).(CallInfo)
	return ci, ok
}

// Observer watches the client's API calls, for tracing and metrics; set one
// with WithObserver. Its methods are called from many goroutines at once and
// must not block.
type Observer interface {
	// CallStarted runs once per call, before its first attempt or wait. The
	// context it returns (carrying a span, say) is used for the whole call.
	CallStarted(ctx context.Context, call CallInfo) context.Context
	// CallEvent reports a wait or a retry inside the call.
	CallEvent(ctx context.Context, ev CallEvent)
	// CallEnded runs once when the call is over, with the context that
	// CallStarted returned.
	CallEnded(ctx context.Context, end CallEnd)
}

// CallEventKind says what a CallEvent reports.
type CallEventKind string

// The kinds of CallEvent.
const (
	// EventLimitWait: the call waited for the rate or concurrency limit, or
	// for a pause the server asked for with Retry-After.
	EventLimitWait CallEventKind = "limit_wait"
	// EventRetry: an attempt failed and another follows after Wait.
	EventRetry CallEventKind = "retry"
)

// CallEvent is one wait or retry inside a call.
type CallEvent struct {
	Kind    CallEventKind
	Attempt int           // the attempt this event comes before, from 1
	Wait    time.Duration // how long the call waited, or will wait before the retry
	Status  int           // for a retry: the status that caused it, 0 after a network error
	Err     error         // for a retry after a network error: that error, without secrets
}

// CallEnd is how a call ended.
type CallEnd struct {
	Status   int           // the last response's status, 0 when none came
	Attempts int           // requests sent, retries included
	Waited   time.Duration // time spent waiting for limits and pauses
	Err      error         // the call's error, nil on success
}
