package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// Synthetic is a Handler's entry for events rebuilt from the API rather
// than received: what package webhook/catchup, or another source of such
// events, uses to hand them to the callbacks, keep its progress in the
// handler's queue, and report to the Observer. Get it from
// Handler.Synthetic.
type Synthetic struct{ h *Handler }

// Synthetic returns the handler's entry for synthesized events.
func (h *Handler) Synthetic() Synthetic { return Synthetic{h} }

// Admit stores an event synthesized from an API record, as ServeHTTP stores
// a delivery: body has the shape of the webhook of its kind, and record is
// the record's JSON, kept in Delivery.Record; the delivery is marked
// Synthesized. An issue or merge request event is keyed by its StateKey
// alone, since a synthesized body is not the server's: so it is a duplicate
// of the delivery of the same state, if the receiver has it.
//
// Admit returns OutcomeAccepted, OutcomeDuplicate, or OutcomeIgnored when
// no callback takes its kind; or an error, when the body does not decode
// or the queue cannot store it.
func (s Synthetic) Admit(ctx context.Context, kind Kind, body, record []byte) (Outcome, error) {
	header := http.Header{"Content-Type": {"application/json"}, HeaderEvent: {string(kind)}}
	ev, err := ParsePayload(header, body)
	if ev == nil {
		return "", fmt.Errorf("webhook: a synthesized %s does not decode: %w", kind, err)
	}
	s.h.partial(ev, nil, err)
	if !s.h.wants(ev.Kind()) {
		s.h.ignored.Add(1)
		s.h.admitted(ctx, kind, OutcomeIgnored)
		return OutcomeIgnored, nil
	}
	d := newDelivery(header, body, ev, time.Now())
	d.Synthesized, d.Record = true, record
	if d.StateKey != "" {
		d.Key = d.StateKey
	}
	if o := s.h.opts.Observer; o != nil {
		o.Inject(ctx, d.Header)
	}
	outcome := OutcomeAccepted
	switch err := s.h.admit(ctx, d); {
	case errors.Is(err, ErrDuplicate):
		outcome = OutcomeDuplicate
	case err != nil:
		return "", err
	}
	s.h.admitted(ctx, kind, outcome)
	return outcome, nil
}

// Checkpoint returns the value kept under name in the handler's queue, or
// nil.
func (s Synthetic) Checkpoint(ctx context.Context, name string) ([]byte, error) {
	return s.h.queue.Checkpoint(ctx, name)
}

// SetCheckpoint keeps value under name in the handler's queue, durably.
func (s Synthetic) SetCheckpoint(ctx context.Context, name string, value []byte) error {
	return s.h.queue.SetCheckpoint(ctx, name, value)
}

// Report hands the report of one catch-up run over one project to the
// Observer (CatchUpEnded), and to the Logger, at level Info, or Warn when
// the run failed.
func (s Synthetic) Report(ctx context.Context, r CatchUpReport) {
	if o := s.h.opts.Observer; o != nil {
		o.CatchUpEnded(ctx, r)
	}
	level, args := slog.LevelInfo, []any{"project", r.Project, "changes", r.Changes, "lag", r.Lag}
	if r.Err != nil {
		level, args = slog.LevelWarn, append(args, "error", r.Err)
	}
	s.h.log(level, "webhook: catch-up run ended", args...)
}
