package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"
)

// gate admits deliveries until it is closed, and tells when the last one
// admitted has left.
type gate struct {
	mu     sync.Mutex
	n      int
	closed bool
	idle   chan struct{} // closed once closed and n is 0
}

func (g *gate) init() { g.idle = make(chan struct{}) }

func (g *gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.n++
	return true
}

func (g *gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n--; g.closed && g.n == 0 {
		close(g.idle)
	}
}

// close stops admitting and waits for those admitted to leave.
func (g *gate) close(ctx context.Context) error {
	g.mu.Lock()
	if !g.closed {
		g.closed = true
		if g.n == 0 {
			close(g.idle)
		}
	}
	g.mu.Unlock()
	return waitFor(ctx, g.idle)
}

// waitFor waits until done is closed or ctx ends; done wins a tie.
func waitFor(ctx context.Context, done <-chan struct{}) error {
	select {
	case <-done:
		return nil
	default:
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runState lets Shutdown stop Run.
type runState struct {
	mu      sync.Mutex
	stopped bool
	cancel  context.CancelFunc // Run's, once it runs
	done    chan struct{}      // closed when Run returns
}

func (s *runState) init() { s.done = make(chan struct{}) }

// begin records Run's cancel; a Run that begins after a stop stops at once.
func (s *runState) begin(cancel context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancel = cancel
	if s.stopped {
		cancel()
	}
}

func (s *runState) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	if s.cancel != nil {
		s.cancel()
	}
}

// Run starts the workers and blocks until ctx ends (or Shutdown is called)
// and they have stopped, or until the queue is closed under them. When ctx
// ends, no new delivery is taken from the queue; running callbacks get
// DrainTimeout to finish before their context is cancelled. A durable
// queue keeps what is not handled by then and hands it out again after a
// restart; a MemoryQueue given in Options keeps it while the process
// lives. When NewHandler made the queue (Options.Queue nil), Run would
// lose what it holds, so the workers go on handling what is ready within
// DrainTimeout; what is left after that is lost. Run
// returns nil on such a stop, and ErrQueueClosed when the queue was closed
// before ctx ended. When NewHandler made the queue, Run closes it. While it
// runs, Run answers the losses a LossReporter queue reports (see
// Options.OnLoss). Run may be called once.
func (h *Handler) Run(ctx context.Context) error {
	if !h.started.CompareAndSwap(false, true) {
		return errors.New("webhook: Run called twice")
	}
	defer close(h.run.done)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	h.run.begin(stop)
	h.health.progressed(time.Now())
	var side sync.WaitGroup
	if lr, ok := h.queue.(LossReporter); ok {
		side.Add(1)
		go func() { defer side.Done(); h.watchLosses(ctx, lr) }()
	}
	err := h.workers(ctx)
	stop()
	side.Wait()
	if h.ownQ {
		_ = h.queue.Close()
	}
	return err
}

// workers runs the workers until ctx ends or the queue closes, then lets
// running callbacks finish within DrainTimeout.
func (h *Handler) workers(ctx context.Context) error {
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
	close(errs)
	return <-errs
}

// Shutdown stops the handler in the order that loses nothing:
//   - it stops admitting: a delivery arriving from now on is closed without
//     an answer, so that the server sends it again;
//   - it waits for the stores in flight, so that each delivery answered 200
//     is in the queue;
//   - it stops Run: no delivery is taken any more, and running callbacks
//     get DrainTimeout before their context is cancelled.
//
// A delivery not handled stays in the queue, which is consistent: close it
// after Shutdown returns (Run closes a queue NewHandler made). Keep serving
// HTTP until Shutdown returns, then shut the server down: a sender that
// finds no listener takes the refused connection as final. Serve does all
// of this. Shutdown returns ctx's error if ctx ends first.
func (h *Handler) Shutdown(ctx context.Context) error {
	if err := h.gate.close(ctx); err != nil {
		return fmt.Errorf("webhook: waiting for the stores in flight: %w", err)
	}
	h.run.stop()
	if !h.started.Load() {
		return nil
	}
	if err := waitFor(ctx, h.run.done); err != nil {
		return fmt.Errorf("webhook: waiting for the workers: %w", err)
	}
	return nil
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
			if h.ownQ { // Run closes it: what it holds would be lost
				h.drain(ctx)
			}
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

// drainIdle is how long a drain waits for a delivery to become ready (the
// next of a partition, once the one before it is acked) before it ends.
const drainIdle = 20 * time.Millisecond

// drain handles, after a stop, what the MemoryQueue the handler made holds
// ready, until none has been ready for drainIdle or ctx (the stop's
// DrainTimeout) ends: Run closes that queue, so what it leaves is lost.
func (h *Handler) drain(ctx context.Context) {
	for ctx.Err() == nil {
		take, cancel := context.WithTimeout(ctx, drainIdle)
		d, err := h.queue.Take(take)
		cancel()
		if err != nil {
			return
		}
		h.handle(ctx, d)
	}
}

// handle runs d's callback, settles d, and tells the Observer.
func (h *Handler) handle(ctx context.Context, d *Delivery) {
	d.Superseded = h.latest.newer(d)
	cctx := withDelivery(ctx, d)
	if o := h.opts.Observer; o != nil {
		cctx = o.HandlingStarted(cctx, d)
	}
	start := time.Now()
	err := h.call(cctx, d)
	outcome := h.settle(ctx, d, err)
	if outcome == HandleDone {
		h.latest.handled(d)
	}
	if o := h.opts.Observer; o != nil {
		o.HandlingEnded(cctx, d, outcome, time.Since(start), err)
	}
	h.health.progressed(time.Now())
}

// settle acks d, schedules a retry, or dead-letters it, by err. When a stop
// cancelled ctx, a failed d keeps its lease, so a durable queue hands it
// out again after a restart.
func (h *Handler) settle(ctx context.Context, d *Delivery, err error) HandleOutcome {
	// Settling must not fail because the stop cancelled ctx.
	sctx := context.WithoutCancel(ctx)
	// Counters move before the queue is told, so that they are up to date
	// when WaitIdle returns.
	switch {
	case err == nil:
		h.handled.Add(1)
		h.health.settled(d.ID)
		if err := h.queue.Ack(sctx, d.ID); err != nil {
			h.handled.Add(-1)
			h.logDelivery(slog.LevelError, "webhook: ack failed; the delivery will be handled again", d, err)
		}
		return HandleDone
	case ctx.Err() != nil:
		h.logDelivery(slog.LevelWarn, "webhook: callback stopped by shutdown; the delivery stays queued", d, err)
		return HandleRetry
	case d.Attempt >= h.opts.MaxAttempts:
		h.logDelivery(slog.LevelError, "webhook: callback failed its last attempt; dead-lettered", d, err)
		h.deadLettered.Add(1)
		h.health.settled(d.ID)
		if err := h.queue.DeadLetter(sctx, d.ID, err.Error()); err != nil {
			h.deadLettered.Add(-1)
			h.logDelivery(slog.LevelError, "webhook: dead-lettering failed", d, err)
		}
		return HandleDeadLetter
	}
	wait := h.backoff(d.Attempt)
	h.logDelivery(slog.LevelWarn, "webhook: callback failed; will retry", d, err, "in", wait)
	h.retried.Add(1)
	now := time.Now()
	h.health.failed(d, now, now.Add(wait))
	if err := h.queue.Retry(sctx, d.ID, now.Add(wait), err.Error()); err != nil {
		h.retried.Add(-1)
		h.logDelivery(slog.LevelError, "webhook: scheduling a retry failed", d, err)
	}
	return HandleRetry
}

// logDelivery logs about d with the stable keys id, kind, key, attempt and
// error, and the stack of a panic.
func (h *Handler) logDelivery(level slog.Level, msg string, d *Delivery, err error, args ...any) {
	args = append([]any{"id", d.ID, "kind", d.Kind, "key", d.Key, "attempt", d.Attempt, "error", err}, args...)
	var p *panicError
	if errors.As(err, &p) {
		args = append(args, "stack", string(p.stack))
	}
	h.log(level, msg, args...)
}

// panicError is a callback's panic, with the stack where it happened.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

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
			err = &panicError{value: p, stack: debug.Stack()}
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
		h.partial(ev, d, err)
	}
	if _, raw := ev.(*RawEvent); raw {
		if h.raw == nil {
			return nil
		}
		return h.raw(ctx, ev)
	}
	if fn := h.callbackFor(ev.Kind()); fn != nil {
		return fn(ctx, ev)
	}
	return nil
}
