package webhook

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"
)

// healthState is what Health knows besides the queue: when the handler
// last made progress, a loss of the engine's state not yet recovered, and
// the deliveries whose last attempt here failed.
type healthState struct {
	mu        sync.Mutex
	progress  time.Time
	lossSince time.Time                   // zero when none
	failing   map[uint64]*FailingDelivery // by delivery id
}

// FailingDelivery is a delivery whose callback keeps failing, as Health
// reports it. Its error is in the log lines carrying its id, not here:
// /healthz may be reachable by more people than the log.
type FailingDelivery struct {
	ID        uint64    `json:"id"`
	Kind      Kind      `json:"kind"`
	Partition string    `json:"partition,omitempty"` // whose later deliveries wait behind it
	Attempts  int       `json:"attempts"`            // attempts made, all failed
	Since     time.Time `json:"since"`               // the first failed attempt this handler saw
	Next      time.Time `json:"next"`                // when it is tried again
}

// failed records that d's attempt failed and is tried again at next.
func (s *healthState) failed(d *Delivery, now, next time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.failing[d.ID]
	if f == nil {
		if s.failing == nil {
			s.failing = map[uint64]*FailingDelivery{}
		}
		f = &FailingDelivery{ID: d.ID, Kind: d.Kind, Partition: d.Partition, Since: now}
		s.failing[d.ID] = f
	}
	f.Attempts, f.Next = d.Attempt, next
}

// settled records that d left the queue: handled, or dead-lettered.
func (s *healthState) settled(id uint64) {
	s.mu.Lock()
	delete(s.failing, id)
	s.mu.Unlock()
}

// stuck lists, by id, the deliveries that failed at least attempts times.
// One whose next attempt is overdue by more than grace is forgotten: it was
// handled elsewhere (another receiver of a shared queue), or the workers
// stand still, which the progress check reports.
func (s *healthState) stuck(attempts int, now time.Time, grace time.Duration) []FailingDelivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []FailingDelivery
	for id, f := range s.failing {
		switch {
		case now.Sub(f.Next) > grace:
			delete(s.failing, id)
		case f.Attempts >= attempts:
			out = append(out, *f)
		}
	}
	slices.SortFunc(out, func(a, b FailingDelivery) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func (s *healthState) progressed(now time.Time) {
	s.mu.Lock()
	s.progress = now
	s.mu.Unlock()
}

// lost records a loss; the earliest unrecovered one is kept.
func (s *healthState) lost(since time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lossSince.IsZero() || since.Before(s.lossSince) {
		s.lossSince = since
	}
}

func (s *healthState) recovered(since time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.lossSince.Before(since) {
		s.lossSince = time.Time{}
	}
}

// Health is the state of a Handler, as Handler.Health reports it.
type Health struct {
	// Ready: the handler can admit deliveries. The queue is reachable, the
	// state its engine keeps is present, no bound is reached, no loss of
	// that state waits for its catch-up, and the handler is not stopping.
	Ready bool `json:"ready"`
	// Progressing: Run runs; when deliveries wait, one was handled within
	// ProgressTimeout; and no delivery has failed StuckAttempts attempts in
	// a row (Failing lists those).
	Progressing bool `json:"progressing"`
	// Queue is the queue's state, when it could be read.
	Queue QueueStats `json:"queue"`
	// LossSince is set while a loss of the engine's state is not recovered:
	// the last time the engine was known to be good.
	LossSince *time.Time `json:"loss_since,omitempty"`
	// Failing lists the deliveries that failed StuckAttempts attempts or
	// more and are still tried again, oldest first. Each holds back the
	// later deliveries of its partition until it succeeds or is
	// dead-lettered.
	Failing []FailingDelivery `json:"failing,omitempty"`
	// Problems says what is wrong, one line each.
	Problems []string `json:"problems,omitempty"`
}

// healthTimeout bounds the queue's check.
const healthTimeout = 5 * time.Second

// Health reports whether the handler can admit deliveries and whether it
// makes progress handling them.
func (h *Handler) Health(ctx context.Context) Health {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	var hs Health
	problem := func(s string) { hs.Problems = append(hs.Problems, s) }
	if err := h.queue.Check(ctx); err != nil {
		problem("queue: " + err.Error())
	}
	st, err := h.queue.Stats(ctx)
	if err != nil {
		problem("queue stats: " + err.Error())
	}
	hs.Queue = st
	h.health.mu.Lock()
	progress, loss := h.health.progress, h.health.lossSince
	h.health.mu.Unlock()
	if !loss.IsZero() {
		hs.LossSince = &loss
		problem("the queue's engine lost its state; catching up from " + loss.Format(time.RFC3339))
	}
	if h.stopping() {
		problem("stopping")
	}
	hs.Ready = len(hs.Problems) == 0
	hs.Progressing = h.progressing(st, err, progress, problem)
	hs.Failing = h.health.stuck(h.opts.StuckAttempts, time.Now(), h.opts.ProgressTimeout)
	for _, f := range hs.Failing {
		problem(f.problem())
	}
	hs.Progressing = hs.Progressing && len(hs.Failing) == 0
	return hs
}

// problem is the line of Health.Problems about f.
func (f *FailingDelivery) problem() string {
	s := fmt.Sprintf("delivery %d (%s) failed %d attempts in a row since %s; its errors are logged with id=%d",
		f.ID, f.Kind, f.Attempts, f.Since.Format(time.RFC3339), f.ID)
	if f.Partition != "" {
		s += "; the later deliveries of " + f.Partition + " wait behind it"
	}
	return s
}

func (h *Handler) progressing(st QueueStats, statsErr error, progress time.Time, problem func(string)) bool {
	switch {
	case !h.started.Load():
		problem("not running: Run was not called")
		return false
	case h.runDone():
		problem("not running: Run returned")
		return false
	case statsErr == nil && st.Pending > 0 && time.Since(progress) > h.opts.ProgressTimeout:
		problem("no progress: deliveries wait and none was handled for " + time.Since(progress).Round(time.Second).String())
		return false
	}
	return true
}

func (h *Handler) stopping() bool {
	h.gate.mu.Lock()
	defer h.gate.mu.Unlock()
	return h.gate.closed
}

func (h *Handler) runDone() bool {
	select {
	case <-h.run.done:
		return true
	default:
		return false
	}
}

// HealthHandler serves Health as JSON: 200 when the handler is ready and
// progressing, 503 otherwise. Serve mounts it at /healthz.
func (h *Handler) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs := h.Health(r.Context())
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !hs.Ready || !hs.Progressing {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(hs)
	})
}

// watchLosses answers each loss the queue reports with OnLoss, until ctx
// ends.
func (h *Handler) watchLosses(ctx context.Context, lr LossReporter) {
	losses := lr.Losses()
	for {
		select {
		case <-ctx.Done():
			return
		case since, ok := <-losses:
			if !ok {
				return
			}
			h.losses.Add(1)
			h.health.lost(since)
			h.log(slog.LevelError, "webhook: the queue's engine lost what it had stored; catching up", "since", since)
			h.recoverLoss(ctx, since)
		}
	}
}

// recoverLoss calls OnLoss until it succeeds or ctx ends; the loss is
// recovered then. Without OnLoss it stays reported.
func (h *Handler) recoverLoss(ctx context.Context, since time.Time) {
	if h.opts.OnLoss == nil {
		h.log(slog.LevelError, "webhook: no Options.OnLoss to catch up after the loss; events stored before it and not handled are lost",
			"since", since)
		return
	}
	for n := 1; ; n++ {
		err := h.opts.OnLoss(ctx, h, since)
		if err == nil {
			h.health.recovered(since)
			h.log(slog.LevelInfo, "webhook: caught up after the loss", "since", since)
			return
		}
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return
		}
		wait := h.backoff(n)
		h.log(slog.LevelError, "webhook: catching up after the loss failed; will retry", "since", since, "in", wait, "error", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}
