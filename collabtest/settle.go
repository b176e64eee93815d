package collabtest

import (
	"context"
	"time"
)

// Idler is a receiver a test waits on besides the fake, such as a
// webhook.Handler or a bot.Bot: WaitIdle returns once everything it has
// received is handled.
type Idler interface {
	WaitIdle(ctx context.Context) error
}

// SettleQuiet is how long Settle watches for a new delivery after everything
// went idle before it calls the system settled.
const SettleQuiet = 50 * time.Millisecond

// Settle waits until the fake has no delivery queued or in flight, every
// receiver is idle, and no new delivery follows within SettleQuiet. A
// receiver's callbacks may call the API, and their changes fire new
// deliveries, so Settle goes round again until a whole quiet window passes
// with no new delivery: one call covers a bot's own calls and the events they
// cause. It returns ctx's error when ctx ends first, so give it a deadline:
// two receivers that answer each other forever never settle.
func (s *Server) Settle(ctx context.Context, receivers ...Idler) error {
	for {
		before := s.deliveryCount()
		if err := s.WaitIdle(ctx); err != nil {
			return err
		}
		for _, r := range receivers {
			if err := r.WaitIdle(ctx); err != nil {
				return err
			}
		}
		t := time.NewTimer(SettleQuiet)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		if s.deliveryCount() == before && s.idleNow() {
			return nil
		}
	}
}

// idleNow reports whether no delivery is queued or in flight right now.
func (s *Server) idleNow() bool {
	d := s.webhooks
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.busy == 0
}

func (s *Server) deliveryCount() int { return len(s.Deliveries()) }
