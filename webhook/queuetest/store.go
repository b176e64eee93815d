package queuetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/collabsvc/collab/webhook"
)

// deadLetters: a dead letter lets its partition go on, is listed with its
// reason, and can be requeued (behind the rest, attempts reset) or deleted;
// Requeue and Delete refuse what is not a dead letter.
func deadLetters(t *testing.T, m Maker) {
	q := m.Open(t, 0, 0)
	ctx := context.Background()
	a1, a2 := deadFirst(t, q)
	takeID(t, q, a2, "a dead letter lets its partition go on")
	wantStats(t, q, 1, 1)
	dead := wantDead(t, q, "a1")
	if dead.ID != a1 || dead.LastError != "gave up" || !bytes.Equal(dead.Body, []byte(`{"k":"a1"}`)) {
		t.Errorf("dead letter %+v; want id %d, its body and the reason %q", dead, a1, "gave up")
	}
	wantErr(t, q.Requeue(ctx, a2), webhook.ErrNotDeadLettered, "Requeue of a leased delivery")
	wantErr(t, q.Delete(ctx, a2), webhook.ErrNotDeadLettered, "Delete of a leased delivery")
	must(t, q.Ack(ctx, a2), "Ack")
	must(t, q.Requeue(ctx, a1), "Requeue")
	wantDead(t, q)
	d := Take(t, q)
	if d.Key != "a1" || d.ID <= a2 || d.Attempt != 1 || !bytes.Equal(d.Body, []byte(`{"k":"a1"}`)) {
		t.Errorf("requeued delivery %+v; want a1 with an id past %d and attempt 1", d, a2)
	}
	must(t, q.DeadLetter(ctx, d.ID, "again"), "DeadLetter")
	must(t, q.Delete(ctx, wantDead(t, q, "a1").ID), "Delete")
	wantDead(t, q)
	wantErr(t, q.Delete(ctx, d.ID), webhook.ErrNotDeadLettered, "Delete twice")
	wantErr(t, q.Requeue(ctx, d.ID), webhook.ErrNotDeadLettered, "Requeue of a deleted dead letter")
	wantErr(t, q.Requeue(ctx, 1<<60), webhook.ErrNotDeadLettered, "Requeue of an unknown id")
	wantStats(t, q, 0, 0)
}

// requeueOrder: a requeued delivery goes behind the pending deliveries of
// its partition.
func requeueOrder(t *testing.T, m Maker) {
	q := m.Open(t, 0, 0)
	ctx := context.Background()
	a1, a2 := deadFirst(t, q)
	must(t, q.Requeue(ctx, a1), "Requeue")
	takeID(t, q, a2, "pending before a1 was requeued")
	NoneReady(t, q) // a1 waits for a2
	must(t, q.Ack(ctx, a2), "Ack")
	if d := Take(t, q); d.Key != "a1" {
		t.Errorf("Take gave %s, want the requeued a1", d.Key)
	}
}

// deadFirst puts a1 and a2 in one partition, and dead-letters a1 with the
// reason "gave up".
func deadFirst(t *testing.T, q webhook.Queue) (a1, a2 uint64) {
	t.Helper()
	a1, a2 = Put(t, q, "a1", "issue/1"), Put(t, q, "a2", "issue/1")
	takeID(t, q, a1, "the oldest")
	must(t, q.DeadLetter(context.Background(), a1, "gave up"), "DeadLetter")
	return a1, a2
}

// wantDead checks that q's dead letters have keys, in this order, and
// returns the first.
func wantDead(t *testing.T, q webhook.Queue, keys ...string) *webhook.Delivery {
	t.Helper()
	dead, err := q.DeadLetters(context.Background())
	must(t, err, "DeadLetters")
	got := make([]string, len(dead))
	for i, d := range dead {
		got[i] = d.Key
	}
	if fmt.Sprint(got) != fmt.Sprint(keys) {
		t.Fatalf("dead letters %q, want %q", got, keys)
	}
	if len(dead) == 0 {
		return nil
	}
	return dead[0]
}

// dedup: a key is remembered, with its state key, once its delivery is
// stored, and still once it is handled.
func dedup(t *testing.T, m Maker) {
	q := m.Open(t, 0, 0)
	ctx := context.Background()
	Put(t, q, "k", "")
	d := &webhook.Delivery{Key: "k"}
	wantErr(t, q.Put(ctx, d), webhook.ErrDuplicate, "Put of a stored key")
	if d.ID != 0 {
		t.Errorf("a duplicate got the id %d", d.ID)
	}
	wantSeen(t, q, "k", true)
	wantSeen(t, q, "other", false)
	must(t, q.Ack(ctx, Take(t, q).ID), "Ack")
	wantErr(t, q.Put(ctx, &webhook.Delivery{Key: "k"}), webhook.ErrDuplicate, "Put of a handled key")

	must(t, q.Put(ctx, &webhook.Delivery{Key: "issue/1/t#1", StateKey: "issue/1/t"}), "Put with a state key")
	wantSeen(t, q, "issue/1/t", true)
	wantErr(t, q.Put(ctx, &webhook.Delivery{Key: "issue/1/t"}), webhook.ErrDuplicate, "Put of a stored state key")
	wantStats(t, q, 1, 0)
}

func wantSeen(t *testing.T, q webhook.Queue, key string, want bool) {
	t.Helper()
	seen, err := q.Seen(context.Background(), key)
	must(t, err, "Seen")
	if seen != want {
		t.Errorf("Seen(%q) = %v, want %v", key, seen, want)
	}
}

// checkpoints: a missing one is nil; a stored one is a copy, overwritten
// by the next.
func checkpoints(t *testing.T, m Maker) {
	q := m.Open(t, 0, 0)
	ctx := context.Background()
	want := func(name, value string) {
		t.Helper()
		v, err := q.Checkpoint(ctx, name)
		must(t, err, "Checkpoint")
		if string(v) != value || (value == "") != (v == nil) {
			t.Errorf("Checkpoint(%q) = %q, want %q", name, v, value)
		}
	}
	want("catchup/7", "")
	v := []byte("2016-06-21T09:14:07Z")
	must(t, q.SetCheckpoint(ctx, "catchup/7", v), "SetCheckpoint")
	v[0] = 'X' // the queue keeps its own copy
	want("catchup/7", "2016-06-21T09:14:07Z")
	want("catchup/8", "")
	must(t, q.SetCheckpoint(ctx, "catchup/7", []byte("2016-06-22T00:00:00Z")), "SetCheckpoint")
	want("catchup/7", "2016-06-22T00:00:00Z")
}

// bound: past MaxPending, Put refuses and records nothing, Check reports
// it, and a settled delivery makes room again; a duplicate is a duplicate
// even at the bound.
func bound(t *testing.T, m Maker) {
	q := m.Open(t, 1, 0)
	ctx := context.Background()
	Put(t, q, "a", "")
	wantErr(t, q.Put(ctx, &webhook.Delivery{Key: "a"}), webhook.ErrDuplicate, "Put of a stored key at the bound")
	wantErr(t, q.Put(ctx, &webhook.Delivery{Key: "b"}), webhook.ErrQueueFull, "Put at the bound")
	wantErr(t, q.Check(ctx), webhook.ErrQueueFull, "Check at the bound")
	wantSeen(t, q, "b", false)
	must(t, q.DeadLetter(ctx, Take(t, q).ID, "x"), "DeadLetter")
	must(t, q.Check(ctx), "Check with a dead letter only")
	Put(t, q, "b", "")
}

// concurrentBounds: hundreds of Puts at once never pass MaxPending or
// MaxBytes; each is stored or refused with ErrQueueFull.
func concurrentBounds(t *testing.T, m Maker) {
	const n = 300
	for _, c := range []struct {
		name    string
		pending int
		bytes   int64
		stored  int
	}{{"MaxPending", 10, 0, 10}, {"MaxBytes", 0, 25 * 1000, 25}} {
		t.Run(c.name, func(t *testing.T) {
			q := m.Open(t, c.pending, c.bytes)
			stored, full := putAtOnce(t, q, n, make([]byte, 1000))
			if stored != c.stored || full != n-c.stored {
				t.Errorf("%d concurrent Puts: %d stored and %d full, want %d and %d", n, stored, full, c.stored, n-c.stored)
			}
			wantStats(t, q, c.stored, 0)
		})
	}
}

// putAtOnce starts n Puts of distinct keys at once, and counts those stored
// and those refused with ErrQueueFull; any other error fails t.
func putAtOnce(t *testing.T, q webhook.Queue, n int, body []byte) (stored, full int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			err := q.Put(context.Background(), &webhook.Delivery{Key: fmt.Sprint("k", i), Body: body})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				stored++
			case errors.Is(err, webhook.ErrQueueFull):
				full++
			default:
				t.Errorf("Put: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	return stored, full
}

// stats: an empty queue has zero stats and passes Check; Oldest is when
// the oldest pending delivery arrived.
func stats(t *testing.T, m Maker) {
	q := m.Open(t, 0, 0)
	ctx := context.Background()
	if st := wantStats(t, q, 0, 0); st != (webhook.QueueStats{}) {
		t.Errorf("Stats of an empty queue: %+v, want zero", st)
	}
	must(t, q.Check(ctx), "Check")
	before := time.Now()
	a := Put(t, q, "a", "")
	Put(t, q, "b", "")
	must(t, q.DeadLetter(ctx, takeID(t, q, a, "the oldest").ID, "x"), "DeadLetter")
	st := wantStats(t, q, 1, 1)
	// A queue may take the time from its engine's clock, on this machine
	// or near it: a minute's leeway.
	if st.Oldest.Before(before.Add(-time.Minute)) || st.Oldest.After(time.Now().Add(time.Minute)) {
		t.Errorf("Stats.Oldest %v, want about %v", st.Oldest, before)
	}
	must(t, q.Check(ctx), "Check")
}
