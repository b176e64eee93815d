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

// Options configure a Handler. Set OnDelivery, or the callbacks of the
// kinds you want; events of other kinds are answered and ignored.
type Options struct {
	// Secret is the hook's secret token. When set, a delivery whose
	// X-Gitlab-Token header differs (or is missing) is answered 401.
	Secret string
	// MaxBodySize caps a delivery's body; a larger one is answered 413.
	// Default DefaultMaxBodySize.
	MaxBodySize int64
	// Queue keeps the accepted deliveries until their callbacks succeed.
	// Default a new MemoryQueue, which loses them on a crash or restart; use
	// a DiskQueue to keep them.
	Queue Queue
	// Workers is the number of goroutines running callbacks. Default 4.
	Workers int
	// MaxAttempts is how many times a delivery is handled before it is
	// dead-lettered. Default 10.
	MaxAttempts int
	// RetryMin and RetryMax bound the wait before the next attempt: it
	// starts at RetryMin and doubles after each failure, up to RetryMax.
	// Defaults 1 s and 5 min.
	RetryMin, RetryMax time.Duration
	// DrainTimeout is how long Run lets running callbacks finish after its
	// context ends; then their context is cancelled. Default 5 s.
	DrainTimeout time.Duration
	// Logger, when set, receives one record per rejected, dropped, failed or
	// partly decoded delivery. Tokens are never logged.
	Logger *slog.Logger

	// OnDelivery, when set, receives every delivery of every kind, as
	// stored; the typed callbacks below must then be nil.
	OnDelivery func(context.Context, *Delivery) error

	// The callbacks, run by the workers. Their context carries the delivery
	// (see DeliveryFrom) and is cancelled when a stop gives up waiting (see
	// Run). An error or a panic fails the attempt; the delivery is tried
	// again later, up to MaxAttempts.
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

// Stats are a Handler's counters since it was made. A delivery that reaches
// the handler counts as Received and as one of Rejected, Dropped,
// Duplicates, Ignored or Accepted; an accepted delivery ends as Handled or
// DeadLettered. Retried counts failed attempts that will be tried again.
type Stats struct {
	Received     int64 // deliveries that reached the handler
	Rejected     int64 // answered 4xx: wrong method, content type, token, size, or not a JSON object
	Dropped      int64 // answered 503: the queue could not store them
	Duplicates   int64 // answered 200 and not stored: the queue holds their dedup key
	Ignored      int64 // answered 200 and not stored: no callback for their kind
	Accepted     int64 // stored and answered 200
	Handled      int64 // callback returned nil and the delivery left the queue
	Retried      int64 // attempts that failed or panicked and will be tried again
	DeadLettered int64 // deliveries that failed their last attempt
}

// Handler is an http.Handler receiving the server's webhooks. It answers a
// delivery 200 once the delivery is stored in its Queue, and runs the
// callbacks on a fixed number of workers, started by Run. A delivery leaves
// the queue only when its callback returns nil: a failed or panicking
// callback is tried again with a growing wait, and after MaxAttempts the
// delivery is dead-lettered (see DeadLetters).
//
// The server never delivers again after an error answer, so the handler
// answers 503 only when the queue cannot store the event (a disk error, or
// a bound you set), and counts it in Stats.Dropped.
//
// Order: deliveries of the same issue or merge request (their notes
// included), of the same build, or pushes to the same branch are handled one
// at a time in the order they arrived, even with several workers; a
// delivery waiting for a retry holds back the later ones of its object
// until it succeeds or is dead-lettered. Other deliveries run in parallel,
// oldest first.
type Handler struct {
	opts    Options
	queue   Queue
	ownQ    bool // queue made by NewHandler, closed by Run
	started atomic.Bool

	received, rejected, dropped, duplicates, ignored, accepted, handled, retried, deadLettered atomic.Int64
}

// NewHandler returns a Handler; call Run to start its workers. Deliveries
// are stored from the start, and handled once Run runs.
func NewHandler(opts Options) (*Handler, error) {
	switch {
	case opts.MaxBodySize < 0, opts.Workers < 0, opts.MaxAttempts < 0, opts.RetryMin < 0, opts.RetryMax < 0, opts.DrainTimeout < 0:
		return nil, errors.New("webhook: negative option")
	case opts.OnDelivery != nil && opts.typed():
		return nil, errors.New("webhook: OnDelivery and the typed callbacks exclude each other")
	}
	if opts.MaxBodySize == 0 {
		opts.MaxBodySize = DefaultMaxBodySize
	}
	if opts.Workers == 0 {
		opts.Workers = 4
	}
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = 10
	}
	if opts.RetryMin == 0 {
		opts.RetryMin = time.Second
	}
	if opts.RetryMax == 0 {
		opts.RetryMax = 5 * time.Minute
	}
	if opts.RetryMax < opts.RetryMin {
		return nil, fmt.Errorf("webhook: RetryMax %v is below RetryMin %v", opts.RetryMax, opts.RetryMin)
	}
	if opts.DrainTimeout == 0 {
		opts.DrainTimeout = 5 * time.Second
	}
	h := &Handler{opts: opts, queue: opts.Queue}
	if h.queue == nil {
		h.queue, h.ownQ = NewMemoryQueue(MemoryQueueOptions{}), true
	}
	return h, nil
}

func (o *Options) typed() bool {
	return o.OnPush != nil || o.OnTagPush != nil || o.OnIssue != nil || o.OnMergeRequest != nil ||
		o.OnNote != nil || o.OnBuild != nil || o.OnWikiPage != nil || o.OnRaw != nil
}

// Stats returns the current counters.
func (h *Handler) Stats() Stats {
	return Stats{
		Received: h.received.Load(), Rejected: h.rejected.Load(), Dropped: h.dropped.Load(),
		Duplicates: h.duplicates.Load(), Ignored: h.ignored.Load(), Accepted: h.accepted.Load(),
		Handled: h.handled.Load(), Retried: h.retried.Load(), DeadLettered: h.deadLettered.Load(),
	}
}

// Run starts the workers and blocks until ctx ends and they have stopped,
// or until the queue is closed under them. When ctx ends, no new delivery
// is taken from the queue; running callbacks get DrainTimeout to finish
// before their context is cancelled. A delivery whose callback did not
// succeed by then stays in the queue: a DiskQueue hands it out again after
// a restart, a MemoryQueue loses it. Run returns nil on such a stop, and
// ErrQueueClosed when the queue was closed before ctx ended. When
// NewHandler made the queue, Run closes it, and later deliveries are
// answered 503. Run may be called once.
func (h *Handler) Run(ctx context.Context) error {
	if !h.started.CompareAndSwap(false, true) {
		return errors.New("webhook: Run called twice")
	}
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, h.opts.Workers)
	for range h.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h.work(ctx, work); err != nil {
				errs <- err
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-ctx.Done():
	case <-done: // every worker stopped: the queue was closed under them
	}
	t := time.NewTimer(h.opts.DrainTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		cancel()
		<-done
	}
	if h.ownQ {
		_ = h.queue.Close()
	}
	close(errs)
	return <-errs
}

// work takes deliveries until stop ends, and handles them under ctx.
func (h *Handler) work(stop, ctx context.Context) error {
	failures := 0
	for {
		d, err := h.queue.Take(stop)
		switch {
		case err == nil:
			// Handled even when the stop came meanwhile: the delivery is
			// leased now, and a queue in memory would never hand it out again.
			failures = 0
			h.handle(ctx, d)
			continue
		case stop.Err() != nil:
			return nil
		case errors.Is(err, ErrQueueClosed):
			return err
		default:
			// A store that fails now may recover; wait as for a retry.
			failures++
			h.log(slog.LevelError, "webhook: taking a delivery failed", "error", err)
			t := time.NewTimer(h.backoff(failures))
			select {
			case <-t.C:
			case <-stop.Done():
				t.Stop()
				return nil
			}
		}
	}
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
	d, ok := h.delivery(w, r, body)
	if !ok {
		return
	}
	// The sender going away must not cut a store short: the event would be
	// half-admitted.
	err = h.admit(context.WithoutCancel(r.Context()), d)
	switch {
	case errors.Is(err, ErrDuplicate):
		w.WriteHeader(http.StatusOK)
	case err != nil:
		h.log(slog.LevelError, "webhook: event dropped with a 503; the sender will not deliver it again", "kind", d.Kind, "error", err)
		http.Error(w, "event not stored", http.StatusServiceUnavailable)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

// delivery makes the record of a delivery to store, from the few values
// that name it when that is enough, else from the decoded event. It answers
// the deliveries it does not store and reports false for them.
func (h *Handler) delivery(w http.ResponseWriter, r *http.Request, body []byte) (*Delivery, bool) {
	kind := Kind(r.Header.Get(HeaderEvent))
	if id, ok := probeIdentity(kind, body); ok {
		if !h.wants(kind) {
			h.ignored.Add(1)
			w.WriteHeader(http.StatusOK)
			return nil, false
		}
		return probedDelivery(r.Header, body, id, time.Now()), true
	}
	ev, err := ParsePayload(r.Header, body)
	if ev == nil {
		h.reject(w, r, http.StatusBadRequest, err.Error())
		return nil, false
	}
	h.partial(ev, err)
	if !h.wants(ev.Kind()) {
		h.ignored.Add(1)
		w.WriteHeader(http.StatusOK)
		return nil, false
	}
	return newDelivery(r.Header, body, ev, time.Now()), true
}

// admit stores d in the queue and counts it: accepted, a duplicate, or
// dropped. The workers pick it up from the queue. Catch-up admits the events
// it synthesizes here too.
func (h *Handler) admit(ctx context.Context, d *Delivery) error {
	err := h.queue.Put(ctx, d)
	switch {
	case err == nil:
		h.accepted.Add(1)
	case errors.Is(err, ErrDuplicate):
		h.duplicates.Add(1)
	default:
		h.dropped.Add(1)
	}
	return err
}

// wants reports whether a callback takes events of kind k.
func (h *Handler) wants(k Kind) bool {
	o := &h.opts
	if o.OnDelivery != nil {
		return true
	}
	switch k {
	case KindPush:
		return o.OnPush != nil
	case KindTagPush:
		return o.OnTagPush != nil
	case KindIssue:
		return o.OnIssue != nil
	case KindMergeRequest:
		return o.OnMergeRequest != nil
	case KindNote:
		return o.OnNote != nil
	case KindBuild:
		return o.OnBuild != nil
	case KindWikiPage:
		return o.OnWikiPage != nil
	}
	return o.OnRaw != nil
}

// handle runs d's callback and settles d: acked, retried later, or
// dead-lettered. When a stop cancelled ctx, a failed d keeps its lease, so a
// durable queue hands it out again after a restart.
func (h *Handler) handle(ctx context.Context, d *Delivery) {
	err := h.call(withDelivery(ctx, d), d)
	// Settling must not fail because the stop cancelled ctx.
	sctx := context.WithoutCancel(ctx)
	// Counters move before the queue is told, so that they are up to date
	// when WaitIdle returns.
	switch {
	case err == nil:
		h.handled.Add(1)
		if err := h.queue.Ack(sctx, d.ID); err != nil {
			h.handled.Add(-1)
			h.log(slog.LevelError, "webhook: ack failed; the delivery will be handled again", "key", d.Key, "error", err)
		}
	case ctx.Err() != nil:
		h.log(slog.LevelWarn, "webhook: callback stopped by shutdown; the delivery stays queued", "key", d.Key, "error", err)
	case d.Attempt >= h.opts.MaxAttempts:
		h.log(slog.LevelError, "webhook: callback failed its last attempt; dead-lettered", "key", d.Key, "attempt", d.Attempt, "error", err)
		h.deadLettered.Add(1)
		if err := h.queue.DeadLetter(sctx, d.ID, err.Error()); err != nil {
			h.deadLettered.Add(-1)
			h.log(slog.LevelError, "webhook: dead-lettering failed", "key", d.Key, "error", err)
		}
	default:
		wait := h.backoff(d.Attempt)
		h.log(slog.LevelWarn, "webhook: callback failed; will retry", "key", d.Key, "attempt", d.Attempt, "in", wait, "error", err)
		h.retried.Add(1)
		if err := h.queue.Retry(sctx, d.ID, time.Now().Add(wait), err.Error()); err != nil {
			h.retried.Add(-1)
			h.log(slog.LevelError, "webhook: scheduling a retry failed", "key", d.Key, "error", err)
		}
	}
}

// backoff is the wait after the n-th failure: RetryMin doubled n-1 times,
// capped at RetryMax.
func (h *Handler) backoff(n int) time.Duration {
	wait := h.opts.RetryMin
	for i := 1; i < n && wait < h.opts.RetryMax; i++ {
		wait *= 2
	}
	return min(wait, h.opts.RetryMax)
}

// call runs the callback for d, turning a panic into an error.
func (h *Handler) call(ctx context.Context, d *Delivery) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	o := &h.opts
	if o.OnDelivery != nil {
		return o.OnDelivery(ctx, d)
	}
	ev := d.event
	if ev == nil {
		var err error
		if ev, err = ParsePayload(d.Header, d.Body); ev == nil {
			return err
		}
		h.partial(ev, err)
	}
	if !h.wants(ev.Kind()) {
		return nil
	}
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

// WaitIdle waits until every delivery in the queue is settled: handled, or
// dead-lettered. It needs a queue that can tell, as MemoryQueue and
// DiskQueue can (a WaitIdle method); with another queue it returns
// errors.ErrUnsupported. Meant for tests: deliver, WaitIdle, then check.
func (h *Handler) WaitIdle(ctx context.Context) error {
	q, ok := h.queue.(interface{ WaitIdle(context.Context) error })
	if !ok {
		return fmt.Errorf("webhook: WaitIdle: %T cannot tell when it is idle: %w", h.queue, errors.ErrUnsupported)
	}
	return q.WaitIdle(ctx)
}

// DeadLetters lists the deliveries whose last attempt failed, oldest first.
func (h *Handler) DeadLetters(ctx context.Context) ([]*Delivery, error) {
	return h.queue.DeadLetters(ctx)
}

// Requeue puts a dead-lettered delivery back in the queue, with its attempts
// reset, behind the pending deliveries of its object.
func (h *Handler) Requeue(ctx context.Context, id uint64) error {
	return h.queue.Requeue(ctx, id)
}

// DeleteDeadLetter removes a dead-lettered delivery for good.
func (h *Handler) DeleteDeadLetter(ctx context.Context, id uint64) error {
	return h.queue.Delete(ctx, id)
}

// partial logs the values of ev that did not decode, if any.
func (h *Handler) partial(ev Event, err error) {
	if err != nil {
		h.log(slog.LevelWarn, "webhook: some values not decoded; the event is handed on with the rest", "kind", ev.Kind(), "error", err)
	}
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
