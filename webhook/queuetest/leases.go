package queuetest

import (
	"bytes"
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/collabsvc/collab/webhook"
)

// fields: what Put stores comes back from Take, field by field, with an
// ID and the first attempt.
func fields(t *testing.T, m Maker) {
	q := m.Open(t, 0, 0)
	in := webhook.Delivery{
		Key: "issue/1/2016-06-21T09:14:07Z#1", StateKey: "issue/1/2016-06-21T09:14:07Z", Partition: "issue/1",
		Kind: webhook.KindIssue, ReceivedAt: time.Date(2016, 6, 21, 9, 14, 7, 123e6, time.UTC),
		Header: http.Header{webhook.HeaderEvent: {string(webhook.KindIssue)}}, Body: []byte(`{"object_kind":"issue"}`),
		Synthesized: true, Record: []byte(`{"id":1}`),
	}
	d := in
	must(t, q.Put(context.Background(), &d), "Put")
	if d.ID == 0 {
		t.Fatal("Put left the ID 0")
	}
	got := takeID(t, q, d.ID, "the only delivery")
	if got.Key != in.Key || got.StateKey != in.StateKey || got.Partition != in.Partition || got.Kind != in.Kind ||
		!got.ReceivedAt.Equal(in.ReceivedAt) || !reflect.DeepEqual(got.Header, in.Header) || !bytes.Equal(got.Body, in.Body) ||
		got.Synthesized != in.Synthesized || !bytes.Equal(got.Record, in.Record) {
		t.Errorf("Take gave\n%+v\nwant what was put:\n%+v", got, in)
	}
	if got.Attempt != 1 || got.LastError != "" {
		t.Errorf("first Take: attempt %d, last error %q; want 1 and none", got.Attempt, got.LastError)
	}
}

// order: oldest first across partitions; within one, a delivery waits
// until the earlier one is settled.
func order(t *testing.T, m Maker) {
	q := m.Open(t, 0, 0)
	a1, a2 := Put(t, q, "a1", "issue/1"), Put(t, q, "a2", "issue/1")
	b1, n1, n2 := Put(t, q, "b1", "issue/2"), Put(t, q, "n1", ""), Put(t, q, "n2", "")
	if !(a1 < a2 && a2 < b1 && b1 < n1 && n1 < n2) {
		t.Errorf("ids %d %d %d %d %d do not grow in arrival order", a1, a2, b1, n1, n2)
	}
	wantStats(t, q, 5, 0)
	takeID(t, q, a1, "the oldest")
	takeID(t, q, b1, "a2 waits for a1")
	takeID(t, q, n1, "no partition")
	takeID(t, q, n2, "no partition: no wait")
	NoneReady(t, q)
	must(t, q.Ack(context.Background(), a1), "Ack")
	takeID(t, q, a2, "a1 is acked")
	wantStats(t, q, 4, 0)
}

// retry: a retried delivery is handed out again at its time, with its
// attempt and error, still ahead of the later ones of its partition.
func retry(t *testing.T, m Maker) {
	q := m.Open(t, 0, 0)
	ctx := context.Background()
	a1, a2 := Put(t, q, "a1", "issue/1"), Put(t, q, "a2", "issue/1")
	b1, b2 := Put(t, q, "b1", "issue/2"), Put(t, q, "b2", "issue/2")
	takeID(t, q, a1, "the oldest")
	takeID(t, q, b1, "a2 waits for a1")
	must(t, q.Retry(ctx, a1, time.Now().Add(time.Hour), "later"), "Retry in an hour")
	must(t, q.Retry(ctx, b1, time.Now(), "boom"), "Retry now")
	d := takeID(t, q, b1, "retried for now, ahead of b2")
	if d.Attempt != 2 || d.LastError != "boom" {
		t.Errorf("retried delivery: attempt %d, last error %q; want 2 and %q", d.Attempt, d.LastError, "boom")
	}
	NoneReady(t, q) // a1 waits an hour, and holds a2 back
	wantErr(t, q.Ack(ctx, a1), webhook.ErrNotLeased, "Ack of a delivery waiting for its retry")
	must(t, q.Ack(ctx, b1), "Ack")
	takeID(t, q, b2, "b1 is acked")
	if m.SetClock == nil {
		return
	}
	later := time.Now().Add(2 * time.Hour)
	m.SetClock(q, func() time.Time { return later })
	d = takeID(t, q, a1, "its retry time has come")
	if d.Attempt != 2 || d.LastError != "later" {
		t.Errorf("retried delivery: attempt %d, last error %q; want 2 and %q", d.Attempt, d.LastError, "later")
	}
	must(t, q.Ack(ctx, a1), "Ack")
	takeID(t, q, a2, "a1 is acked")
}

// notLeased: Ack, Retry and DeadLetter refuse a delivery that is not
// leased: unknown, pending, or settled already.
func notLeased(t *testing.T, m Maker) {
	q := m.Open(t, 0, 0)
	ctx := context.Background()
	acked, pending := Put(t, q, "acked", "issue/1"), Put(t, q, "pending", "issue/1")
	takeID(t, q, acked, "the oldest")
	must(t, q.Ack(ctx, acked), "Ack")
	for _, c := range []struct {
		what string
		id   uint64
	}{{"unknown", 1 << 60}, {"pending", pending}, {"acked", acked}} {
		wantErr(t, q.Ack(ctx, c.id), webhook.ErrNotLeased, "Ack of a delivery "+c.what)
		wantErr(t, q.Retry(ctx, c.id, time.Now(), "x"), webhook.ErrNotLeased, "Retry of a delivery "+c.what)
		wantErr(t, q.DeadLetter(ctx, c.id, "x"), webhook.ErrNotLeased, "DeadLetter of a delivery "+c.what)
	}
	takeID(t, q, pending, "what the refusals left alone")
	wantStats(t, q, 1, 0)
}

// takeContext: Take returns its context's error when it ends.
func takeContext(t *testing.T, m Maker) {
	q := m.Open(t, 0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := q.Take(ctx)
	wantErr(t, err, context.Canceled, "Take with a cancelled context")
	NoneReady(t, q)
}

// closing: Close ends blocked Takes, and the queue refuses work after it.
func closing(t *testing.T, m Maker) {
	q := m.Open(t, 0, 0)
	ctx := context.Background()
	taken := make(chan error)
	go func() {
		_, err := q.Take(ctx)
		taken <- err
	}()
	must(t, q.Close(), "Close")
	wantErr(t, <-taken, webhook.ErrQueueClosed, "Take blocked at Close")
	_, err := q.Take(ctx)
	wantErr(t, err, webhook.ErrQueueClosed, "Take after Close")
	wantErr(t, q.Put(ctx, &webhook.Delivery{Key: "x"}), webhook.ErrQueueClosed, "Put after Close")
	wantErr(t, q.Check(ctx), webhook.ErrQueueClosed, "Check after Close")
	must(t, q.Close(), "Close twice")
}

// waitIdle: a queue that tells when it is idle waits while a delivery is
// pending or leased, and returns once it is acked or dead-lettered.
func waitIdle(t *testing.T, m Maker) {
	q := m.Open(t, 0, 0)
	w, ok := q.(webhook.IdleWaiter)
	if !ok {
		t.Skipf("%T does not implement webhook.IdleWaiter", q)
	}
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	must(t, w.WaitIdle(ctx), "WaitIdle on an empty queue")
	a := Put(t, q, "a", "")
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	wantErr(t, w.WaitIdle(short), context.DeadlineExceeded, "WaitIdle with a delivery pending")
	takeID(t, q, a, "the only delivery")
	idle := make(chan error, 1)
	go func() { idle <- w.WaitIdle(ctx) }()
	must(t, q.Ack(ctx, a), "Ack")
	must(t, <-idle, "WaitIdle after the Ack")

	b := Put(t, q, "b", "")
	takeID(t, q, b, "the only delivery")
	go func() { idle <- w.WaitIdle(ctx) }()
	must(t, q.DeadLetter(ctx, b, "x"), "DeadLetter")
	must(t, <-idle, "WaitIdle after the DeadLetter")
	must(t, w.WaitIdle(ctx), "WaitIdle with only a dead letter")
}
