// Package queuetest checks that a webhook.Queue keeps the promises a
// webhook.Handler relies on. A queue of your own (another engine, a wrapper
// with metrics) proves itself by running the suite from one of its tests:
//
//	func TestQueue(t *testing.T) {
//		queuetest.Run(t, queuetest.Maker{
//			Open: func(t *testing.T, maxPending int, maxBytes int64) queuetest.Queue {
//				q := myqueue.New(myqueue.Options{MaxPending: maxPending, MaxBytes: maxBytes})
//				t.Cleanup(func() { q.Close() })
//				return q
//			},
//		})
//	}
//
// Each check runs as a subtest on a queue of its own, and covers every
// method of webhook.Queue, the errors included: the order of Take across
// partitions, leases and retries, dead letters, dedup keys, checkpoints,
// the bounds (under concurrent Puts too), Stats, Check and Close. A queue
// that also implements webhook.IdleWaiter has its WaitIdle checked.
//
// The suite waits only for what it expects to happen (a Take waits at most
// 10 s); it asserts that nothing is ready by waiting 20 ms, so a queue that
// hands a delivery out late may pass where it should fail, never the other
// way round.
package queuetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/collabsvc/collab/webhook"
)

// Queue is the queue under test.
type Queue = webhook.Queue

// Maker makes the queues under test.
type Maker struct {
	// Open returns a new, empty queue, with duplicate suppression on, that
	// holds at most maxPending deliveries (pending, leased or waiting for a
	// retry) and maxBytes of their bodies; 0 means no bound. The suite closes the queue in one of
	// its checks and leaves it open in the others: Open arranges the
	// cleanup, with t.Cleanup. A queue that has no such bound calls t.Skip
	// when asked for one.
	Open func(t *testing.T, maxPending int, maxBytes int64) Queue
	// SetClock, when not nil, sets the clock the queue reads the time from.
	// The suite then checks that a delivery retried for later is handed out
	// once that time has come, not only that it is held back until then.
	SetClock func(q Queue, now func() time.Time)
}

// Run runs every check of the suite, each as a subtest.
func Run(t *testing.T, m Maker) {
	checks := []struct {
		name string
		run  func(*testing.T, Maker)
	}{
		{"Fields", fields},
		{"Order", order},
		{"Retry", retry},
		{"NotLeased", notLeased},
		{"DeadLetters", deadLetters},
		{"RequeueOrder", requeueOrder},
		{"Dedup", dedup},
		{"Checkpoints", checkpoints},
		{"Bound", bound},
		{"ConcurrentBounds", concurrentBounds},
		{"Stats", stats},
		{"TakeContext", takeContext},
		{"Close", closing},
		{"WaitIdle", waitIdle},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.run(t, m) })
	}
}

// Put stores a small issue delivery with key and partition, and returns its
// id.
func Put(t *testing.T, q webhook.Queue, key, partition string) uint64 {
	t.Helper()
	d := &webhook.Delivery{Key: key, Partition: partition, Kind: webhook.KindIssue, ReceivedAt: time.Now(),
		Body: []byte(`{"k":"` + key + `"}`)}
	if err := q.Put(context.Background(), d); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	if d.ID == 0 {
		t.Fatalf("Put(%q) left the ID 0", key)
	}
	return d.ID
}

// Take takes the next delivery, and fails t when none is ready within 10 s.
func Take(t *testing.T, q webhook.Queue) *webhook.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := q.Take(ctx)
	if err != nil {
		t.Fatalf("Take: %v", err)
	}
	return d
}

// NoneReady checks that Take hands nothing out within 20 ms.
func NoneReady(t *testing.T, q webhook.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	d, err := q.Take(ctx)
	if err == nil {
		t.Fatalf("Take handed out %d (%s); want nothing ready", d.ID, d.Key)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Take with nothing ready: %v, want context.DeadlineExceeded", err)
	}
}

// takeID takes the next delivery and checks that it is id.
func takeID(t *testing.T, q webhook.Queue, id uint64, why string) *webhook.Delivery {
	t.Helper()
	d := Take(t, q)
	if d.ID != id {
		t.Fatalf("Take gave %d (%s), want %d: %s", d.ID, d.Key, id, why)
	}
	return d
}

// must fails t at once when err is not nil.
func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wantErr checks that err wraps target.
func wantErr(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got error %v, want one wrapping %q", what, err, target)
	}
}

// wantStats checks the counts of q's Stats.
func wantStats(t *testing.T, q webhook.Queue, pending, dead int) webhook.QueueStats {
	t.Helper()
	st, err := q.Stats(context.Background())
	must(t, err, "Stats")
	if st.Pending != pending || st.DeadLetters != dead {
		t.Errorf("Stats: %d pending and %d dead letters, want %d and %d", st.Pending, st.DeadLetters, pending, dead)
	}
	return st
}
