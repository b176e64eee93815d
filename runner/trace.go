package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/collabsvc/collab"
)

// RangeError is a 416 answer to a trace append: the part did not start at
// the end of the server's trace. Length is the server's current trace
// length, where the next part must start. It matches
// collab.ErrRangeNotSatisfiable and unwraps to the *collab.ErrorResponse.
type RangeError struct {
	Length int64
	Err    *collab.ErrorResponse
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("%v (server trace length %d)", e.Err, e.Length)
}

// Unwrap returns the server's error response.
func (e *RangeError) Unwrap() error { return e.Err }

// AppendTrace sends part as the bytes of the build's trace starting at
// offset, which must equal the trace's current length on the server. It
// returns the build status the server reports (collab.BuildCanceled means: stop the
// build) and the trace's new length. A wrong offset gives a *RangeError
// carrying the server's length, to resume from. An empty part is sent as a
// one-byte range at offset (the server checks only the start): it changes
// nothing and reports the status.
//
// The request carries Content-Range "<start>-<end>" with no "bytes " prefix
// and end = offset+len(part)-1, as deployed runners send it.
//
// API: PATCH /builds/:id/trace.txt (runner)
func (c *Client) AppendTrace(ctx context.Context, id int, buildToken string, offset int64, part []byte) (status collab.BuildStatus, length int64, err error) {
	if offset < 0 {
		return "", 0, &collab.ArgumentError{Arg: "offset", Reason: fmt.Sprintf("is negative (%d)", offset)}
	}
	req, err := c.buildRequest(ctx, traceMethod, id, "/trace.txt", buildToken, bytes.NewReader(part))
	if err != nil {
		return "", 0, err
	}
	end := max(offset, offset+int64(len(part))-1)
	req.Header.Set("Content-Range", strconv.FormatInt(offset, 10)+"-"+strconv.FormatInt(end, 10))
	req.Header.Set("Content-Type", "text/plain")
	resp, err := c.c.Do(req, nil)
	if err != nil {
		var er *collab.ErrorResponse
		if errors.As(err, &er) && er.StatusCode == http.StatusRequestedRangeNotSatisfiable {
			n, perr := parseRange(er.Header.Get("Range"))
			if perr != nil {
				return "", 0, fmt.Errorf("%w (and %v)", er, perr)
			}
			return "", 0, &RangeError{Length: n, Err: er}
		}
		return "", 0, err
	}
	status = collab.BuildStatus(strings.TrimSpace(resp.Header.Get("Build-Status")))
	h := resp.Header.Get("Range")
	if strings.TrimSpace(h) == "" {
		return status, offset + int64(len(part)), nil
	}
	n, err := parseRange(h)
	if err != nil {
		return status, 0, decodeError(req, err)
	}
	return status, n, nil
}

// parseRange reads the server's "Range: 0-<length>" header, in which the
// second number is the trace length (not the last byte's index). It accepts
// spaces and a "bytes" unit with " " or "=", and rejects anything else.
func parseRange(h string) (int64, error) {
	start, end, err := parseByteRange(h)
	if err != nil {
		return 0, err
	}
	if start != 0 {
		return 0, fmt.Errorf("runner: Range %q does not start at 0", truncateHeader(h))
	}
	return end, nil
}

// parseByteRange reads "<start>-<end>" with optional spaces and unit.
func parseByteRange(h string) (start, end int64, err error) {
	s := strings.TrimSpace(h)
	if rest, ok := cutPrefixFold(s, "bytes"); ok {
		s = strings.TrimLeft(rest, " =")
	}
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return 0, 0, fmt.Errorf("runner: malformed range %q", truncateHeader(h))
	}
	b, _, _ = strings.Cut(b, "/") // "0-99/100" as some proxies write it
	start, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	end, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
	if err1 != nil || err2 != nil || start < 0 || end < 0 {
		return 0, 0, fmt.Errorf("runner: malformed range %q", truncateHeader(h))
	}
	return start, end, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

func truncateHeader(h string) string {
	if len(h) > 64 {
		return h[:64] + "…"
	}
	return h
}

// ErrTraceDiverged reports that the server's trace no longer matches what
// the TraceWriter wrote: it holds more bytes than were sent, or fewer than
// it had acknowledged (a PUT with a trace replaced it, say). Retrying cannot
// fix it.
var ErrTraceDiverged = errors.New("runner: server trace diverged from the bytes written")

// ErrWriterClosed is returned by Write after Close.
var ErrWriterClosed = errors.New("runner: trace writer closed")

// Defaults of TraceWriterOptions.
const (
	DefaultFlushSize     = 64 << 10
	DefaultMaxBuffer     = 1 << 20
	DefaultFlushInterval = 3 * time.Second
	DefaultMaxFailures   = 10
)

// TraceWriterOptions tune a TraceWriter. The zero value is ready to use.
type TraceWriterOptions struct {
	// Offset is the server's current trace length, where appends start: 0
	// for a new build, or the length a previous writer reached.
	Offset int64
	// FlushSize sends an append once this many bytes are buffered
	// (DefaultFlushSize when 0).
	FlushSize int
	// MaxBuffer bounds the bytes held in memory, sent or not, until the
	// server acknowledges them. Write blocks at the bound, so a slow or
	// unreachable server slows the producer instead of growing memory
	// (DefaultMaxBuffer when 0; raised to FlushSize if smaller).
	MaxBuffer int
	// FlushInterval sends whatever is buffered this often, and is the wait
	// before the next call after a failed one (DefaultFlushInterval when 0).
	FlushInterval time.Duration
	// MaxFailures is the number of failed calls in a row after which the
	// writer stops with the last error (DefaultMaxFailures when 0; negative
	// goes on until the context ends).
	MaxFailures int
	// Logger, when set, logs failed calls and resyncs at debug level.
	// Tokens are never logged.
	Logger *slog.Logger

	// tick, when set, replaces the FlushInterval ticker, so that tests
	// decide when timed flushes happen.
	tick <-chan time.Time
}

// TraceWriter streams a build's log to the server as ordered appends. It is
// an io.WriteCloser safe for concurrent use: hand it to exec.Cmd as Stdout
// and Stderr.
//
// Writes are buffered and sent by one background goroutine when FlushSize
// bytes are buffered, every FlushInterval, and on Close. No byte is lost or
// sent twice: bytes are kept until the server acknowledges them, and each
// append starts where the server's trace ends.
//
// Calls. The writer sends its bytes as a sequence of calls, each one
// AppendTrace of the bytes not yet acknowledged. A call makes at most the
// attempts of the client's RetryPolicy (the core retries it on a 429 or a
// refused connection). A call succeeds when the server takes at least one
// byte: the writer then goes on at once with a new call for the rest, if
// any. A 416 is a success too when its Range shows the server holds more
// than was acknowledged (an earlier answer was lost): the writer resyncs to
// that length and sends only what the server lacks. A call fails on a
// connection error, a 5xx, a 408, a 429 the retries did not clear, or an
// answer that takes no byte; the writer keeps the bytes and makes its next
// call at the next FlushInterval tick (not sooner, whatever is written), so
// a failing server gets at most one call per tick. After MaxFailures failed
// calls in a row it stops.
//
// The writer also stops when the server's trace diverges (ErrTraceDiverged),
// on any other error status (a 403 once the build is over, say), or when its
// context ends. Bytes not yet acknowledged then are not sent.
//
// When the server reports the build canceled, Canceled is closed: the caller
// should stop the job, then Close the writer to send the rest of the log.
type TraceWriter struct {
	c           *Client
	ctx         context.Context
	id          int
	token       string
	flushSize   int
	maxBuffer   int
	maxFailures int
	logger      *slog.Logger

	kick     chan struct{} // wakes the sender; capacity 1
	done     chan struct{} // closed when the sender exits
	canceled chan struct{} // closed when the server reports canceled

	mu     sync.Mutex
	space  *sync.Cond // signalled when bytes are acknowledged or the writer stops
	buf    []byte     // bytes written but not acknowledged; buf[0] is at offset acked
	acked  int64      // the server's trace length as last acknowledged
	status collab.BuildStatus
	closed bool
	forced bool  // Flush asked to send whatever is buffered
	err    error // sticky: why the writer stopped

	// Used only by the sender.
	sent     int64 // highest offset ever sent
	failures int   // failed calls in a row
}

// NewTraceWriter starts a TraceWriter for build id, authenticated with the
// build token. ctx bounds every append: when it ends, the writer stops and
// Write and Close return its error. Close must be called to stop the
// background goroutine.
//
// API: PATCH /builds/:id/trace.txt (runner)
func (c *Client) NewTraceWriter(ctx context.Context, id int, buildToken string, opts TraceWriterOptions) *TraceWriter {
	w := &TraceWriter{
		c: c, ctx: ctx, id: id, token: buildToken,
		flushSize: opts.FlushSize, maxBuffer: opts.MaxBuffer, maxFailures: opts.MaxFailures, logger: opts.Logger,
		kick: make(chan struct{}, 1), done: make(chan struct{}), canceled: make(chan struct{}),
		acked: opts.Offset, sent: opts.Offset,
	}
	w.space = sync.NewCond(&w.mu)
	if w.flushSize <= 0 {
		w.flushSize = DefaultFlushSize
	}
	if w.maxBuffer <= 0 {
		w.maxBuffer = DefaultMaxBuffer
	}
	w.maxBuffer = max(w.maxBuffer, w.flushSize)
	if w.maxFailures == 0 {
		w.maxFailures = DefaultMaxFailures
	}
	tick, stop := opts.tick, func() {}
	if tick == nil {
		interval := opts.FlushInterval
		if interval <= 0 {
			interval = DefaultFlushInterval
		}
		t := time.NewTicker(interval)
		tick, stop = t.C, t.Stop
	}
	if opts.Offset < 0 {
		w.err = &collab.ArgumentError{Arg: "opts.Offset", Reason: fmt.Sprintf("is negative (%d)", opts.Offset)}
	}
	if ctx == nil {
		w.ctx, w.err = context.Background(), &collab.ArgumentError{Arg: "ctx", Reason: "is nil"}
	}
	go w.run(tick, stop)
	return w
}

// Write buffers p. It blocks while MaxBuffer bytes await acknowledgement,
// and returns how much of p was buffered and the writer's error once it has
// stopped.
func (w *TraceWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for len(p) > 0 {
		if w.err != nil {
			return n, w.err
		}
		if w.closed {
			return n, ErrWriterClosed
		}
		free := w.maxBuffer - len(w.buf)
		if free <= 0 {
			w.wake()
			w.space.Wait()
			continue
		}
		k := min(free, len(p))
		if cap(w.buf)-len(w.buf) < k {
			// One array of MaxBuffer bytes, not append's doubling: a full
			// buffer then costs one allocation, not a series of copies.
			nb := make([]byte, len(w.buf), w.maxBuffer)
			copy(nb, w.buf)
			w.buf = nb
		}
		w.buf = append(w.buf, p[:k]...)
		n += k
		p = p[k:]
		if len(w.buf) >= w.flushSize {
			w.wake()
		}
	}
	return n, nil
}

// Flush asks the background goroutine to send what is buffered now, without
// waiting for it.
func (w *TraceWriter) Flush() {
	w.mu.Lock()
	w.forced = true
	w.mu.Unlock()
	w.wake()
}

func (w *TraceWriter) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// Close sends everything buffered, stops the background goroutine and
// returns the writer's error, if it stopped on one. It may be called more
// than once. While the server fails, calls still follow the ticks, so Close
// may wait up to MaxFailures flush intervals; end the writer's context to
// stop sooner.
func (w *TraceWriter) Close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.wake()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Canceled is closed once the server reports the build canceled.
func (w *TraceWriter) Canceled() <-chan struct{} { return w.canceled }

// Status is the build status the server last reported ("" before the first
// append).
func (w *TraceWriter) Status() collab.BuildStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status
}

// Length is the server's trace length as last acknowledged.
func (w *TraceWriter) Length() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acked
}

// Err is the error the writer stopped on, or nil while it runs.
func (w *TraceWriter) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// run is the sender: it waits for a reason to send, sends, and exits once
// closed and drained, or stopped. After a failed call only a tick sends.
func (w *TraceWriter) run(tick <-chan time.Time, stopTicker func()) {
	defer close(w.done)
	defer stopTicker()
	failing := false
	for {
		send := true
		select {
		case <-w.ctx.Done():
			w.fail(w.ctx.Err())
		case <-tick:
		case <-w.kick:
			// A size wake may be stale: bytes that passed FlushSize while an
			// append was in flight may since have been sent with it. Sending
			// only full chunks keeps the request count near size/FlushSize.
			w.mu.Lock()
			send = !failing && (w.closed || w.forced || w.err != nil || len(w.buf) >= w.flushSize)
			w.forced = false
			w.mu.Unlock()
		}
		if send {
			failing = !w.flush()
		}
		w.mu.Lock()
		stop := w.err != nil || (w.closed && len(w.buf) == 0)
		w.mu.Unlock()
		if stop {
			return
		}
	}
}

// fail stops the writer with err (the first error wins) and wakes blocked writers.
func (w *TraceWriter) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.space.Broadcast()
	w.mu.Unlock()
}

// ack drops the n bytes the server now holds from the front of the buffer.
// The dropped bytes are never overwritten: the transport may still read a
// request body after the response arrived, so memory handed to a request is
// left to the garbage collector instead of being reused.
func (w *TraceWriter) ack(n int64) {
	w.mu.Lock()
	w.buf = w.buf[n:]
	if len(w.buf) == 0 {
		w.buf = nil
	}
	w.acked += n
	w.space.Broadcast()
	w.mu.Unlock()
}

// flush makes calls until every byte buffered when it started is
// acknowledged, the writer stops, or a call fails; it reports false after a
// failed call.
func (w *TraceWriter) flush() bool {
	w.mu.Lock()
	target := w.acked + int64(len(w.buf))
	w.mu.Unlock()
	for {
		w.mu.Lock()
		if w.err != nil || w.acked >= target {
			w.mu.Unlock()
			return true
		}
		off, part := w.acked, w.buf
		w.mu.Unlock()

		err := w.call(off, part)
		switch {
		case err == nil:
			w.failures = 0
			continue
		case w.ctx.Err() != nil:
			w.fail(w.ctx.Err())
		case !transient(err):
			w.fail(err)
		default:
			w.failures++
			if w.maxFailures > 0 && w.failures >= w.maxFailures {
				w.fail(fmt.Errorf("runner: trace append failed %d times in a row: %w", w.failures, err))
				break
			}
			w.debugCall("runner: trace append failed; next call at the next tick", "build", w.id, "offset", off, "failures", w.failures, "error", err)
		}
		return false
	}
}

// errNoProgress is a trace append answer that took none of the bytes.
var errNoProgress = errors.New("runner: the server took none of the appended bytes")

// call sends one AppendTrace of part at off and acknowledges what the
// server took. It returns nil when the server took at least one byte, a
// transient error when the call may pass later, and any other error when the
// writer must stop.
func (w *TraceWriter) call(off int64, part []byte) error {
	w.sent = max(w.sent, off+int64(len(part)))
	status, length, err := w.c.AppendTrace(w.ctx, w.id, w.token, off, part)
	var rerr *RangeError
	switch {
	case err == nil:
		w.setStatus(status)
		if length < off || length > off+int64(len(part)) {
			return fmt.Errorf("%w: appended %d bytes at %d, server reports length %d", ErrTraceDiverged, len(part), off, length)
		}
	case errors.As(err, &rerr):
		switch {
		case rerr.Length < off:
			return fmt.Errorf("%w: server trace shrank to %d bytes, %d were acknowledged", ErrTraceDiverged, rerr.Length, off)
		case rerr.Length > w.sent:
			return fmt.Errorf("%w: server holds %d bytes, only %d were sent", ErrTraceDiverged, rerr.Length, w.sent)
		}
		w.debugCall("runner: trace resync", "build", w.id, "from", off, "to", rerr.Length)
		length = rerr.Length
	default:
		return err
	}
	if length == off {
		if rerr != nil {
			return rerr
		}
		return errNoProgress
	}
	w.ack(length - off)
	return nil
}

func (w *TraceWriter) setStatus(s collab.BuildStatus) {
	if s == "" {
		return
	}
	w.mu.Lock()
	w.status = s
	w.mu.Unlock()
	if s == collab.BuildCanceled {
		select {
		case <-w.canceled:
		default:
			close(w.canceled)
		}
	}
}

// The append call the writer makes, named as the core's log lines name a
// call: its method and its route template.
const (
	traceMethod = http.MethodPatch
	traceRoute  = "/builds/:id/trace.txt"
)

// debugCall logs, at debug level, a line about the writer's append call,
// with the call's method and route first. The attempts inside a call are
// the core's, which logs each with its number; the writer counts failed
// calls.
func (w *TraceWriter) debugCall(msg string, args ...any) {
	if w.logger != nil {
		w.logger.Debug(msg, append([]any{"method", traceMethod, "route", traceRoute}, args...)...)
	}
}

// transient reports failures that may pass on a later call: no response at
// all, a 5xx, a 408, a 429, or an answer that took no byte.
func transient(err error) bool {
	var rerr *RangeError
	if errors.Is(err, errNoProgress) || errors.As(err, &rerr) {
		return true
	}
	var re *collab.RequestError
	if errors.As(err, &re) {
		return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
	}
	var er *collab.ErrorResponse
	if errors.As(err, &er) {
		return er.StatusCode >= 500 || er.StatusCode == http.StatusTooManyRequests || er.StatusCode == http.StatusRequestTimeout
	}
	return false
}
