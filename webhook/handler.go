package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
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
	// package diskqueue (or redisqueue) to keep them.
	Queue Queue
	// StoreTimeout bounds the storing of one delivery. A store that takes
	// longer (an engine that stalls, a disk that hangs) is given up, and the
	// delivery is asked for again. Default 8 s, under the sender's 10 s.
	StoreTimeout time.Duration
	// Answer503, when set, answers a delivery that could not be stored with
	// 503 instead of asking for it again. The server takes any 4xx or 5xx
	// answer as final and never sends that event again: only catch-up can
	// find it.
	Answer503 bool
	// Workers is the number of goroutines running callbacks. Default 4.
	Workers int
	// MaxAttempts is how many times a delivery is handled before it is
	// dead-lettered. Default 10.
	MaxAttempts int
	// RetryMin and RetryMax bound the wait before the next attempt: it
	// starts at RetryMin and doubles after each failure, up to RetryMax.
	// Defaults 1 s and 5 min.
	RetryMin, RetryMax time.Duration
	// DrainTimeout is how long a stop lets running callbacks finish; then
	// their context is cancelled. Default 5 s.
	DrainTimeout time.Duration
	// ProgressTimeout is how long deliveries may wait with none handled
	// before Health reports that the handler makes no progress. Default 10
	// min; keep it above RetryMax.
	ProgressTimeout time.Duration
	// StuckAttempts is how many attempts in a row a delivery may fail
	// before Health reports that the handler makes no progress, naming the
	// delivery (Health.Failing), until it succeeds or is dead-lettered.
	// Default 3; set it above MaxAttempts to never report one.
	StuckAttempts int
	// OnLoss is called when the queue reports that its engine lost what it
	// had stored (see LossReporter), with this handler and the last time the
	// engine was known to be good; it should catch up from then into h, as
	// catchup.OnLoss does. Until it returns nil (it is called again with a
	// growing wait) the handler reports itself unhealthy.
	OnLoss func(ctx context.Context, h *Handler, since time.Time) error
	// Observer, when set, watches admissions and handlings, for tracing and
	// metrics.
	Observer Observer
	// Logger receives one record per rejected, asked-again, dropped or
	// partly decoded delivery, and per failed attempt (an error or a panic,
	// with its stack), with the keys id, kind, key, attempt and error where
	// they apply. Tokens and bodies are never logged. Default
	// slog.Default(), as it is when the record is written.
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
// the handler counts as Received and as one of Rejected, AskedAgain,
// Dropped, Duplicates, Ignored or Accepted; an accepted delivery ends as
// Handled or DeadLettered. Retried counts failed attempts that will be
// tried again.
type Stats struct {
	Received      int64 // deliveries that reached the handler
	Rejected      int64 // answered 4xx: wrong method, content type, token, size, or not a JSON object
	AskedAgain    int64 // not stored, and closed without an answer so that the server sends them again
	Dropped       int64 // not stored, and answered 503 (only with Options.Answer503)
	Duplicates    int64 // answered 200 and not stored: the queue holds their dedup key
	Ignored       int64 // answered 200 and not stored: no callback for their kind
	Accepted      int64 // stored and answered 200
	Handled       int64 // callback returned nil and the delivery left the queue
	Retried       int64 // attempts that failed or panicked and will be tried again
	DeadLettered  int64 // deliveries that failed their last attempt
	StoreTimeouts int64 // stores given up after StoreTimeout (also counted as AskedAgain or Dropped)
	Losses        int64 // losses of the engine's state reported by the queue
}

// Handler is an http.Handler receiving the server's webhooks. It answers a
// delivery 200 once the delivery is stored in its Queue, and runs the
// callbacks on a fixed number of workers, started by Run. A delivery leaves
// the queue only when its callback returns nil: a failed or panicking
// callback is tried again with a growing wait, and after MaxAttempts the
// delivery is dead-lettered (see DeadLetters).
//
// The server never delivers again after an error answer, but does after an
// exchange closed without one. So when the queue cannot store a delivery
// (an engine unreachable or stalled, a full disk, a bound reached, a store
// past StoreTimeout) or the handler is stopping, it reads the body and
// closes the connection without answering, and counts it in
// Stats.AskedAgain; the server sends the same body again later. It does so
// by panicking with http.ErrAbortHandler, which net/http turns into an
// orderly close: a middleware that recovers panics must let that one
// through.
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
	gate    gate
	run     runState
	health  healthState
	latest  latestStates
	// callbacks are the typed callbacks by kind, and raw is OnRaw: the one
	// listing of them, read to decide what is wanted and whom to call.
	callbacks map[Kind]callback
	raw       callback

	received, rejected, askedAgain, dropped, duplicates, ignored, accepted, handled, retried, deadLettered atomic.Int64
	storeTimeouts, losses                                                                                  atomic.Int64
}

// NewHandler returns a Handler; call Run to start its workers. Deliveries
// are stored from the start, and handled once Run runs.
func NewHandler(opts Options) (*Handler, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	opts.defaults()
	if opts.RetryMax < opts.RetryMin {
		return nil, fmt.Errorf("webhook: RetryMax %v is below RetryMin %v", opts.RetryMax, opts.RetryMin)
	}
	h := &Handler{opts: opts, queue: opts.Queue}
	h.callbacks, h.raw = opts.callbacks()
	if h.queue == nil {
		h.queue, h.ownQ = NewMemoryQueue(MemoryQueueOptions{}), true
	}
	h.gate.init()
	h.run.init()
	return h, nil
}

func (o *Options) check() error {
	switch {
	case o.MaxBodySize < 0, o.Workers < 0, o.MaxAttempts < 0, o.RetryMin < 0, o.RetryMax < 0, o.DrainTimeout < 0,
		o.StoreTimeout < 0, o.ProgressTimeout < 0, o.StuckAttempts < 0:
		return errors.New("webhook: negative option")
	case o.OnDelivery != nil && o.typed():
		return errors.New("webhook: OnDelivery and the typed callbacks exclude each other")
	}
	return nil
}

func (o *Options) defaults() {
	setDefault(&o.MaxBodySize, DefaultMaxBodySize)
	setDefault(&o.Workers, 4)
	setDefault(&o.MaxAttempts, 10)
	setDefault(&o.RetryMin, time.Second)
	setDefault(&o.RetryMax, 5*time.Minute)
	setDefault(&o.DrainTimeout, 5*time.Second)
	setDefault(&o.StoreTimeout, DefaultStoreTimeout)
	setDefault(&o.ProgressTimeout, 10*time.Minute)
	setDefault(&o.StuckAttempts, 3)
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// DefaultStoreTimeout is Options.StoreTimeout unless set: well under the
// sender's 10 s, so that a delivery asked for again is closed before the
// sender gives up by itself.
const DefaultStoreTimeout = 8 * time.Second

// callback runs a typed callback on an event of its kind.
type callback func(context.Context, Event) error

// bind makes fn a callback, or nil when fn is nil. An event of another type
// than fn takes is an error, never a panic.
func bind[E Event](fn func(context.Context, E) error) callback {
	if fn == nil {
		return nil
	}
	return func(ctx context.Context, ev Event) error {
		e, ok := ev.(E)
		if !ok {
			return fmt.Errorf("webhook: unexpected event %T", ev)
		}
		return fn(ctx, e)
	}
}

// callbacks lists the typed callbacks set, by kind, and OnRaw.
func (o *Options) callbacks() (map[Kind]callback, callback) {
	all := map[Kind]callback{
		KindPush:         bind(o.OnPush),
		KindTagPush:      bind(o.OnTagPush),
		KindIssue:        bind(o.OnIssue),
		KindMergeRequest: bind(o.OnMergeRequest),
		KindNote:         bind(o.OnNote),
		KindBuild:        bind(o.OnBuild),
		KindWikiPage:     bind(o.OnWikiPage),
	}
	for k, fn := range all {
		if fn == nil {
			delete(all, k)
		}
	}
	return all, bind(o.OnRaw)
}

// typed reports whether any typed callback is set.
func (o *Options) typed() bool {
	set, raw := o.callbacks()
	return len(set) > 0 || raw != nil
}

// Stats returns the current counters.
func (h *Handler) Stats() Stats {
	return Stats{
		Received: h.received.Load(), Rejected: h.rejected.Load(), AskedAgain: h.askedAgain.Load(), Dropped: h.dropped.Load(),
		Duplicates: h.duplicates.Load(), Ignored: h.ignored.Load(), Accepted: h.accepted.Load(),
		Handled: h.handled.Load(), Retried: h.retried.Load(), DeadLettered: h.deadLettered.Load(),
		StoreTimeouts: h.storeTimeouts.Load(), Losses: h.losses.Load(),
	}
}

// ServeHTTP receives one delivery.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.received.Add(1)
	ctx := r.Context()
	if o := h.opts.Observer; o != nil {
		ctx = o.DeliveryReceived(ctx, r)
	}
	if !h.gate.enter() {
		// Stopping: read the body, so that the close is orderly, and ask
		// for the delivery again.
		_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, h.opts.MaxBodySize))
		h.askAgain(ctx, Kind(r.Header.Get(HeaderEvent)), "", errStopping)
		return
	}
	defer h.gate.leave()
	body, ok := h.read(ctx, w, r)
	if !ok {
		return
	}
	d, ok := h.delivery(ctx, w, r, body)
	if !ok {
		return
	}
	h.store(ctx, w, d)
}

var errStopping = errors.New("webhook: the handler is stopping")

// read checks a delivery's method, token and content type, and reads its
// body. It answers the deliveries it rejects and reports false for them.
func (h *Handler) read(ctx context.Context, w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.reject(ctx, w, r, http.StatusMethodNotAllowed, "method not allowed")
		return nil, false
	}
	if h.opts.Secret != "" && !ValidToken(r.Header, h.opts.Secret) {
		h.reject(ctx, w, r, http.StatusUnauthorized, "wrong or missing token")
		return nil, false
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		h.reject(ctx, w, r, http.StatusUnsupportedMediaType, "content type is not application/json")
		return nil, false
	}
	body, err := readBody(http.MaxBytesReader(w, r.Body, h.opts.MaxBodySize), r.ContentLength, h.opts.MaxBodySize)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		h.reject(ctx, w, r, http.StatusRequestEntityTooLarge, "body too large")
		return nil, false
	case err != nil:
		// The connection failed, not the delivery: no answer, so that the
		// sender tries again.
		h.askAgain(ctx, Kind(r.Header.Get(HeaderEvent)), "", err)
	}
	return body, true
}

// isJSON reports whether the media type ct is application/json, with or
// without parameters; the usual value is known without parsing.
func isJSON(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// readBody reads a body announced as n bytes (-1: unknown) into a buffer
// made once for that length, when it is within limit, where io.ReadAll would
// grow its buffer several times. The announced length is only a hint: a
// body of another length still reads whole. net/http reports the end with
// the last bytes, so a whole body takes one buffer of its size.
func readBody(body io.Reader, n, limit int64) ([]byte, error) {
	if n <= 0 || n > limit {
		return io.ReadAll(body)
	}
	buf := make([]byte, n)
	for k := 0; k < len(buf); {
		m, err := body.Read(buf[k:])
		k += m
		switch {
		case err == io.EOF:
			return buf[:k], nil
		case err != nil:
			return buf[:k], err
		}
	}
	// The announced length is read: a longer body reads on.
	rest, err := io.ReadAll(body)
	return append(buf, rest...), err
}

// delivery makes the record of a delivery to store, from the few values
// that name it when that is enough, else from the decoded event. It answers
// the deliveries it does not store and reports false for them.
func (h *Handler) delivery(ctx context.Context, w http.ResponseWriter, r *http.Request, body []byte) (*Delivery, bool) {
	kind := Kind(r.Header.Get(HeaderEvent))
	var d *Delivery
	if id, ok := probeIdentity(kind, body); ok {
		d = probedDelivery(r.Header, body, id, time.Now())
	} else {
		ev, err := ParsePayload(r.Header, body)
		if ev == nil {
			h.reject(ctx, w, r, http.StatusBadRequest, err.Error())
			return nil, false
		}
		d = newDelivery(r.Header, body, ev, time.Now())
		h.partial(ev, d, err)
	}
	if !h.wants(d.Kind) {
		h.ignored.Add(1)
		h.admitted(ctx, d.Kind, OutcomeIgnored)
		w.WriteHeader(http.StatusOK)
		return nil, false
	}
	return d, true
}

// store stores d within StoreTimeout and answers: 200 when it is stored or
// was before, else no answer (or 503 with Answer503).
func (h *Handler) store(ctx context.Context, w http.ResponseWriter, d *Delivery) {
	if o := h.opts.Observer; o != nil {
		o.Inject(ctx, d.Header)
	}
	// The sender going away must not cut a store short: the event would be
	// half-admitted. StoreTimeout bounds it instead.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.opts.StoreTimeout)
	defer cancel()
	err := h.admit(sctx, d)
	switch {
	case err == nil:
		h.admitted(ctx, d.Kind, OutcomeAccepted)
		w.WriteHeader(http.StatusOK)
	case errors.Is(err, ErrDuplicate):
		h.admitted(ctx, d.Kind, OutcomeDuplicate)
		w.WriteHeader(http.StatusOK)
	case h.opts.Answer503:
		h.dropped.Add(1)
		h.admitted(ctx, d.Kind, OutcomeRefused)
		h.log(slog.LevelError, "webhook: event not stored and answered 503; the sender will not deliver it again",
			"kind", d.Kind, "key", d.Key, "error", err)
		http.Error(w, "event not stored", http.StatusServiceUnavailable)
	default:
		h.askAgain(ctx, d.Kind, d.Key, err)
	}
}

// askAgain ends the exchange without an answer, which the sender takes as a
// read failure: it delivers the same body again later. The body must have
// been read, so that the close is orderly and not a reset (which the sender
// would take as final). net/http closes the connection on this panic.
func (h *Handler) askAgain(ctx context.Context, kind Kind, key string, why error) {
	h.askedAgain.Add(1)
	h.admitted(ctx, kind, OutcomeAskedAgain)
	h.log(slog.LevelWarn, "webhook: event not stored; closed without an answer so that the sender delivers it again",
		"kind", kind, "key", key, "error", why)
	panic(http.ErrAbortHandler)
}

// admit stores d in the queue and counts it as accepted or a duplicate;
// the workers pick it up from the queue. Catch-up admits the events it
// synthesizes here too.
func (h *Handler) admit(ctx context.Context, d *Delivery) error {
	err := h.queue.Put(ctx, d)
	switch {
	case err == nil:
		h.accepted.Add(1)
	case errors.Is(err, ErrDuplicate):
		h.duplicates.Add(1)
	case errors.Is(err, context.DeadlineExceeded):
		h.storeTimeouts.Add(1)
	}
	return err
}

func (h *Handler) admitted(ctx context.Context, kind Kind, outcome Outcome) {
	if o := h.opts.Observer; o != nil {
		o.DeliveryAdmitted(ctx, kind, outcome)
	}
}

// wants reports whether a callback takes events of kind k.
func (h *Handler) wants(k Kind) bool {
	return h.opts.OnDelivery != nil || h.callbackFor(k) != nil
}

// callbackFor is the typed callback that takes events of kind k: OnRaw for
// a kind this package does not know, nil when none does.
func (h *Handler) callbackFor(k Kind) callback {
	if _, known := decoders[k]; !known {
		return h.raw
	}
	return h.callbacks[k]
}

// IdleWaiter is implemented by a queue that can tell when it holds no
// delivery still to handle, as MemoryQueue, diskqueue.Queue and
// redisqueue.Queue can. Handler.WaitIdle uses it.
type IdleWaiter interface {
	// WaitIdle waits until no delivery is pending, leased or waiting for a
	// retry, or ctx ends. Dead letters do not count.
	WaitIdle(ctx context.Context) error
}

// WaitIdle waits until every delivery in the queue is settled: handled, or
// dead-lettered. A delivery waiting for a retry keeps it waiting, so bound
// ctx. It drains a queue that dies with the process (a MemoryQueue) before
// a planned stop: stop the deliveries coming in (take the receiver out of
// its load balancer), WaitIdle, then Shutdown. It also ends a batch run,
// such as a catch-up into a Handler that serves no HTTP, and it is what a
// test waits for between delivering and checking. It needs a queue that
// implements IdleWaiter; with another it returns errors.ErrUnsupported.
func (h *Handler) WaitIdle(ctx context.Context) error {
	q, ok := h.queue.(IdleWaiter)
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

// partial logs the values of ev that did not decode, if any; d is the
// delivery ev came in, with its key and attempt, or nil for an event not
// yet a delivery.
func (h *Handler) partial(ev Event, d *Delivery, err error) {
	const msg = "webhook: some values not decoded; the event is handed on with the rest"
	switch {
	case err == nil:
	case d != nil:
		h.logDelivery(slog.LevelWarn, msg, d, err)
	default:
		h.log(slog.LevelWarn, msg, "kind", ev.Kind(), "error", err)
	}
}

func (h *Handler) reject(ctx context.Context, w http.ResponseWriter, r *http.Request, status int, reason string) {
	h.rejected.Add(1)
	h.admitted(ctx, Kind(r.Header.Get(HeaderEvent)), OutcomeRejected)
	h.log(slog.LevelWarn, "webhook: delivery rejected", "status", status, "reason", reason, "remote", r.RemoteAddr,
		"kind", r.Header.Get(HeaderEvent))
	http.Error(w, reason, status)
}

func (h *Handler) log(level slog.Level, msg string, args ...any) {
	l := h.opts.Logger
	if l == nil {
		l = slog.Default()
	}
	l.Log(context.Background(), level, msg, args...)
}
