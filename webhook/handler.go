package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// SenderTimeout is how long the server waits for a receiver's answer before
// it gives up and, later, delivers the same body again.
const SenderTimeout = 10 * time.Second

// Options configure a Handler. Only the callbacks of the kinds you want are
// needed; events of other kinds are answered and ignored.
type Options struct {
	// Secret is the hook's secret token. When set, a delivery whose
	// X-Gitlab-Token header differs (or is missing) is answered 401.
	Secret string
	// MaxBodySize caps a delivery's body; a larger one is answered 413.
	// Default DefaultMaxBodySize.
	MaxBodySize int64
	// Workers is the number of goroutines running callbacks. Default 4.
	Workers int
	// QueueSize is how many accepted events may wait for a worker. Default 100.
	QueueSize int
	// QueueWait is how long a delivery waits for room in a full queue before
	// it is answered 503 and counted as dropped. It must stay below
	// SenderTimeout. Default 2 s.
	QueueWait time.Duration
	// DrainTimeout is how long Run keeps handling queued events after its
	// context ends; then the callbacks' context is cancelled and what is
	// still queued is dropped. Default 5 s.
	DrainTimeout time.Duration
	// DedupWindow turns on duplicate suppression: a delivery whose DedupKey
	// was accepted within the window is answered 200 and not handed on.
	DedupWindow time.Duration
	// DedupStore holds the keys; default a new MemoryStore.
	DedupStore DedupStore
	// Logger, when set, receives one record per rejected, dropped, failed or
	// partly decoded delivery. Tokens are never logged.
	Logger *slog.Logger

	// The callbacks, run by the workers. Their context is cancelled when a
	// stop gives up draining (see Run). An error or a panic counts the event
	// as failed and is logged; the sender has already been answered.
	OnPush         func(context.Context, *PushEvent) error
	OnTagPush      func(context.Context, *TagPushEvent) error
	OnIssue        func(context.Context, *IssueEvent) error
	OnMergeRequest func(context.Context, *MergeRequestEvent) error
	OnNote         func(context.Context, *NoteEvent) error
	OnBuild        func(context.Context, *BuildEvent) error
	OnWikiPage     func(context.Context, *WikiPageEvent) error
	// OnRaw receives events of kinds this package does not know.
	OnRaw func(context.Context, *RawEvent) error
}

// Stats are a Handler's counters. Every delivery counts as Received and, once
// settled, as exactly one of Rejected, Dropped, Duplicates, Ignored, Handled
// or Failed; Queued are accepted and not yet settled.
type Stats struct {
	Received   int64 // deliveries that reached the handler
	Rejected   int64 // answered 4xx: wrong method, content type, token, size, or not a JSON object
	Dropped    int64 // answered 503 (queue full or stopping), or queued when a stop gave up on them
	Duplicates int64 // repeats suppressed by DedupWindow
	Ignored    int64 // accepted with no callback for their kind
	Handled    int64 // callback returned nil
	Failed     int64 // callback returned an error or panicked
	Queued     int64 // accepted and waiting for, or running in, a worker
}

// Handler is an http.Handler receiving the server's webhooks. It answers a
// delivery as soon as the event is queued, and runs the callbacks on a fixed
// number of workers, started by Run.
//
// The server never delivers again after an error answer, so a 503 loses the
// event: Handler answers 503 only when the queue stays full for QueueWait,
// and counts it in Stats.Dropped. Size Workers and QueueSize so that does not
// happen, or have the callbacks hand slow work to a durable queue. Waiting
// longer than the server's 10 s timeout is no remedy: the server would count
// the delivery as failed and send it again later, much later after repeated
// failures.
type Handler struct {
	opts  Options
	queue chan Event

	mu       sync.RWMutex // held for reading while enqueueing; Run takes it to close the queue
	closed   bool
	stopping chan struct{}
	started  atomic.Bool

	received, rejected, dropped, duplicates, ignored, handled, failed, queued atomic.Int64

	// timer makes a timer; tests replace it to control waiting.
	timer func(time.Duration) (<-chan time.Time, func() bool)
}

// NewHandler returns a Handler; call Run to start its workers.
func NewHandler(opts Options) (*Handler, error) {
	switch {
	case opts.MaxBodySize < 0, opts.Workers < 0, opts.QueueSize < 0, opts.QueueWait < 0, opts.DrainTimeout < 0, opts.DedupWindow < 0:
		return nil, errors.New("webhook: negative option")
	case opts.QueueWait >= SenderTimeout:
		return nil, fmt.Errorf("webhook: QueueWait %v must stay below the sender's %v timeout", opts.QueueWait, SenderTimeout)
	}
	if opts.MaxBodySize == 0 {
		opts.MaxBodySize = DefaultMaxBodySize
	}
	if opts.Workers == 0 {
		opts.Workers = 4
	}
	if opts.QueueSize == 0 {
		opts.QueueSize = 100
	}
	if opts.QueueWait == 0 {
		opts.QueueWait = 2 * time.Second
	}
	if opts.DrainTimeout == 0 {
		opts.DrainTimeout = 5 * time.Second
	}
	if opts.DedupWindow > 0 && opts.DedupStore == nil {
		opts.DedupStore = NewMemoryStore()
	}
	return &Handler{
		opts:     opts,
		queue:    make(chan Event, opts.QueueSize),
		stopping: make(chan struct{}),
		timer: func(d time.Duration) (<-chan time.Time, func() bool) {
			t := time.NewTimer(d)
			return t.C, t.Stop
		},
	}, nil
}

// Stats returns the current counters.
func (h *Handler) Stats() Stats {
	return Stats{
		Received: h.received.Load(), Rejected: h.rejected.Load(), Dropped: h.dropped.Load(),
		Duplicates: h.duplicates.Load(), Ignored: h.ignored.Load(), Handled: h.handled.Load(),
		Failed: h.failed.Load(), Queued: h.queued.Load(),
	}
}

// Run starts the workers and blocks until ctx ends and they have stopped.
// From then on deliveries are answered 503. Events still queued are handled
// for up to DrainTimeout; then the callbacks' context is cancelled, events
// not started are dropped, and Run returns when the running callbacks have
// returned, with an error saying how many events were dropped. Run may be
// called once.
func (h *Handler) Run(ctx context.Context) error {
	if !h.started.CompareAndSwap(false, true) {
		return errors.New("webhook: Run called twice")
	}
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	var lost atomic.Int64
	var wg sync.WaitGroup
	for range h.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range h.queue {
				if work.Err() != nil {
					h.settle(&h.dropped)
					lost.Add(1)
					continue
				}
				h.handle(work, ev)
			}
		}()
	}
	<-ctx.Done()
	close(h.stopping) // wakes deliveries waiting for room
	h.mu.Lock()
	h.closed = true
	close(h.queue)
	h.mu.Unlock()

	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	expired, stop := h.timer(h.opts.DrainTimeout)
	defer stop()
	select {
	case <-done:
	case <-expired:
		cancel()
		<-done
	}
	if n := lost.Load(); n > 0 {
		h.log(slog.LevelError, "webhook: events dropped at shutdown", "count", n)
		return fmt.Errorf("webhook: %d queued event(s) dropped at shutdown", n)
	}
	return nil
}

// ServeHTTP receives one delivery.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.received.Add(1)
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.reject(w, r, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	if h.opts.Secret != "" && !ValidToken(r.Header, h.opts.Secret) {
		h.reject(w, r, http.StatusUnauthorized, "wrong or missing token")
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		h.reject(w, r, http.StatusUnsupportedMediaType, "content type is not application/json")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodySize))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		h.reject(w, r, http.StatusRequestEntityTooLarge, "body too large")
		return
	case err != nil:
		h.reject(w, r, http.StatusBadRequest, "reading the body failed")
		return
	}
	ev, err := ParsePayload(r.Header, body)
	if ev == nil {
		h.reject(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if err != nil {
		h.log(slog.LevelWarn, "webhook: some values not decoded; the event is handed on with the rest", "kind", ev.Kind(), "error", err)
	}
	if !h.wants(ev) {
		h.ignored.Add(1)
		w.WriteHeader(http.StatusOK)
		return
	}
	if h.opts.DedupWindow > 0 {
		seen, err := h.opts.DedupStore.Seen(r.Context(), DedupKey(ev, body), h.opts.DedupWindow)
		if err != nil {
			// Better a repeat than a loss: hand the event on.
			h.log(slog.LevelWarn, "webhook: duplicate check failed", "kind", ev.Kind(), "error", err)
		}
		if seen {
			h.duplicates.Add(1)
			w.WriteHeader(http.StatusOK)
			return
		}
	}
	if reason := h.enqueue(r.Context(), ev); reason != "" {
		h.dropped.Add(1)
		msg := "webhook: event dropped with a 503; the sender will not deliver it again"
		if r.Context().Err() != nil {
			msg = "webhook: event dropped; the sender went away and may deliver it again"
		}
		h.log(slog.LevelError, msg, "kind", ev.Kind(), "reason", reason)
		http.Error(w, reason, http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// enqueue queues ev, waiting up to QueueWait for room. It returns why it
// could not, or "".
func (h *Handler) enqueue(ctx context.Context, ev Event) string {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return "receiver stopping"
	}
	h.queued.Add(1)
	select {
	case h.queue <- ev:
		return ""
	default:
	}
	expired, stop := h.timer(h.opts.QueueWait)
	defer stop()
	select {
	case h.queue <- ev:
		return ""
	case <-expired:
		h.queued.Add(-1)
		return "queue full"
	case <-h.stopping:
		h.queued.Add(-1)
		return "receiver stopping"
	case <-ctx.Done():
		h.queued.Add(-1)
		return "sender went away"
	}
}

func (h *Handler) wants(ev Event) bool {
	o := &h.opts
	switch ev.(type) {
	case *PushEvent:
		return o.OnPush != nil
	case *TagPushEvent:
		return o.OnTagPush != nil
	case *IssueEvent:
		return o.OnIssue != nil
	case *MergeRequestEvent:
		return o.OnMergeRequest != nil
	case *NoteEvent:
		return o.OnNote != nil
	case *BuildEvent:
		return o.OnBuild != nil
	case *WikiPageEvent:
		return o.OnWikiPage != nil
	}
	return o.OnRaw != nil
}

func (h *Handler) handle(ctx context.Context, ev Event) {
	err := h.call(ctx, ev)
	if err != nil {
		h.log(slog.LevelError, "webhook: callback failed", "kind", ev.Kind(), "error", err)
		h.settle(&h.failed)
		return
	}
	h.settle(&h.handled)
}

func (h *Handler) settle(counter *atomic.Int64) {
	counter.Add(1)
	h.queued.Add(-1)
}

func (h *Handler) call(ctx context.Context, ev Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	o := &h.opts
	switch e := ev.(type) {
	case *PushEvent:
		return o.OnPush(ctx, e)
	case *TagPushEvent:
		return o.OnTagPush(ctx, e)
	case *IssueEvent:
		return o.OnIssue(ctx, e)
	case *MergeRequestEvent:
		return o.OnMergeRequest(ctx, e)
	case *NoteEvent:
		return o.OnNote(ctx, e)
	case *BuildEvent:
		return o.OnBuild(ctx, e)
	case *WikiPageEvent:
		return o.OnWikiPage(ctx, e)
	case *RawEvent:
		return o.OnRaw(ctx, e)
	}
	return fmt.Errorf("unexpected event %T", ev)
}

func (h *Handler) reject(w http.ResponseWriter, r *http.Request, status int, reason string) {
	h.rejected.Add(1)
	h.log(slog.LevelWarn, "webhook: delivery rejected", "status", status, "reason", reason, "remote", r.RemoteAddr,
		"kind", r.Header.Get(HeaderEvent))
	http.Error(w, reason, status)
}

func (h *Handler) log(level slog.Level, msg string, args ...any) {
	if h.opts.Logger != nil {
		h.opts.Logger.Log(context.Background(), level, msg, args...)
	}
}
