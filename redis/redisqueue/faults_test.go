package redisqueue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/collabsvc/collab/redis/internal/redistest"
	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/queuetest"
	"github.com/redis/go-redis/v9"
)

const prefix = "{collab:webhook}:"

// Deliveries damaged in Redis (body, record, metadata, checksums) are never
// handed out: each is dead-lettered with a reason naming the damage, and
// counted; the sound one behind them in their partition is handed out.
func TestDamagedDelivery(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{})
	ctx := context.Background()
	damage := []struct{ field, value, reason string }{
		{"b", `{"object_kind":"issue","x":1}`, "body fails its checksum"},
		{"r", `{"id":2}`, "record fails its checksum"},
		{"m", `{"key":"other"}`, "metadata fails its checksum"},
		{"c", "0000", "checksums are missing"},
	}
	ids := map[uint64]string{}
	for i, dm := range damage {
		d := delivery(fmt.Sprintf("bad%d", i), "issue/1")
		d.Synthesized, d.Record = true, []byte(`{"id":1}`)
		id := put(t, q, d)
		if err := rdb.HSet(ctx, fmt.Sprintf(prefix+"d:%d", id), dm.field, dm.value).Err(); err != nil {
			t.Fatal(err)
		}
		ids[id] = dm.reason
	}
	good := put(t, q, delivery("good", "issue/1"))
	if d := queuetest.Take(t, q); d.ID != good {
		t.Fatalf("Take = %d, want %d", d.ID, good)
	}
	dead, err := q.DeadLetters(ctx)
	if err != nil || len(dead) != len(damage) {
		t.Fatalf("DeadLetters = %d, %v; want %d", len(dead), err, len(damage))
	}
	for _, d := range dead {
		if want := ids[d.ID]; !strings.Contains(d.LastError, want) || !strings.Contains(d.LastError, "damaged") {
			t.Errorf("dead letter %d: reason %q, want it to name %q", d.ID, d.LastError, want)
		}
	}
	if f := q.Faults(); f.Damaged != int64(len(damage)) {
		t.Errorf("Faults = %+v, want %d damaged", f, len(damage))
	}
	st, err := q.Stats(ctx)
	if err != nil || st.Damaged != int64(len(damage)) || st.DeadLetters != len(damage) || st.Pending != 1 || st.Oldest.IsZero() {
		t.Errorf("Stats = %+v, %v; want %d damaged and dead-lettered, 1 pending", st, err, len(damage))
	}
}

// A damaged dedup key is taken as absent: Seen says no, and a delivery
// with that key is stored (and at worst handled twice), counted as damage.
func TestDamagedDedupKey(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{})
	ctx := context.Background()
	put(t, q, delivery("issue/1/a", ""))
	if err := rdb.Set(ctx, prefix+"k:issue/1/a", "kdeadbeef", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if seen, err := q.Seen(ctx, "issue/1/a"); err != nil || seen {
		t.Fatalf("Seen of a damaged key = %v, %v; want false", seen, err)
	}
	put(t, q, delivery("issue/1/a", ""))
	if err := q.Put(ctx, delivery("issue/1/a", "")); !errors.Is(err, webhook.ErrDuplicate) {
		t.Fatalf("Put after the key was written again: %v, want ErrDuplicate", err)
	}
	if f := q.Faults(); f.Damaged != 2 {
		t.Errorf("Faults = %+v, want 2 damaged (Seen, Put)", f)
	}
}

// The body and record are stored raw, each value once, and checked.
func TestStorageFormat(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{})
	ctx := context.Background()
	d := delivery("k", "issue/1")
	d.Body, d.Record, d.Synthesized = []byte(`{"object_kind":"issue","é":"\u00e9"}`), []byte(`{"id":7}`), true
	id := put(t, q, d)
	h, err := rdb.HGetAll(ctx, fmt.Sprintf(prefix+"d:%d", id)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if h["b"] != string(d.Body) || h["r"] != string(d.Record) {
		t.Fatalf("body %q record %q stored, want them raw", h["b"], h["r"])
	}
	if _, ok := h["j"]; ok || strings.Contains(h["m"], "attempt") || strings.Contains(h["m"], "last_error") ||
		strings.Contains(h["m"], "body") {
		t.Fatalf("metadata %q repeats a value stored in a field of its own", h["m"])
	}
	got := queuetest.Take(t, q)
	if string(got.Body) != string(d.Body) || string(got.Record) != string(d.Record) || !got.Synthesized {
		t.Fatalf("Take = %+v", got)
	}
}

// Entries stored by earlier versions (the delivery as JSON in field j, the
// body in base64, dedup keys valued "1") are still read: handed out,
// listed as dead letters, and their keys still suppress repeats.
func TestOldFormat(t *testing.T) {
	rdb := startRedis(t)
	ctx := context.Background()
	old := func(id int, key, partition string) {
		d := delivery(key, partition)
		d.Attempt, d.LastError = 3, "stale copy" // stored twice by the old format; n and e win
		j, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		ps := 0
		if partition != "" {
			ps = int(rdb.Incr(ctx, prefix+"ps:"+partition).Val())
		}
		sid := rdb.XAdd(ctx, &redis.XAddArgs{Stream: prefix + "stream", Values: []string{"id", fmt.Sprint(id)}}).Val()
		rdb.HSet(ctx, fmt.Sprintf(prefix+"d:%d", id), "j", j, "p", partition, "ps", ps, "n", 0, "at", 0, "sid", sid)
		rdb.Set(ctx, prefix+"k:"+key, "1", time.Hour)
		rdb.Set(ctx, prefix+"seq", id, 0)
	}
	old(1, "issue/1/a", "issue/1")
	old(2, "issue/1/b", "issue/1")
	q := newQueue(t, rdb, redisqueue.Options{})
	if err := q.Put(ctx, delivery("issue/1/a", "")); !errors.Is(err, webhook.ErrDuplicate) {
		t.Fatalf("Put of a key stored in the old format: %v, want ErrDuplicate", err)
	}
	d := queuetest.Take(t, q)
	if d.ID != 1 || d.Key != "issue/1/a" || string(d.Body) != `{"object_kind":"issue"}` || d.Attempt != 1 || d.LastError != "" {
		t.Fatalf("Take of an old entry = %+v", d)
	}
	if err := q.DeadLetter(ctx, 1, "gave up"); err != nil {
		t.Fatal(err)
	}
	if d := queuetest.Take(t, q); d.ID != 2 {
		t.Fatalf("Take = %d, want 2", d.ID)
	}
	dead, err := q.DeadLetters(ctx)
	if err != nil || len(dead) != 1 || dead[0].Key != "issue/1/a" || dead[0].LastError != "gave up" {
		t.Fatalf("DeadLetters = %+v, %v", dead, err)
	}
	if next := put(t, q, delivery("new", "")); next != 3 {
		t.Fatalf("new id %d, want 3", next)
	}
}

// A consumer group or stream deleted under running receivers is created
// again on the fly: deliveries go on being stored and handed out.
func TestGroupRecreated(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{CheckInterval: time.Hour})
	ctx := context.Background()
	for i, drop := range []func() error{
		func() error { return rdb.XGroupDestroy(ctx, prefix+"stream", "receivers").Err() },
		func() error { return rdb.Del(ctx, prefix+"stream").Err() },
	} {
		if err := drop(); err != nil {
			t.Fatal(err)
		}
		id := put(t, q, delivery(fmt.Sprint(i), ""))
		d := queuetest.Take(t, q)
		if d.ID != id {
			t.Fatalf("Take = %d, want %d", d.ID, id)
		}
		if err := q.Ack(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if f := q.Faults(); f.GroupsCreated != 2 || f.Losses != 0 {
		t.Fatalf("Faults = %+v, want 2 groups created, no loss", f)
	}
}

// Redis restarted empty: each receiver detects it, counts it, and reports
// through Losses the last time every pending delivery was still there; the
// queue works on, with ids above those given out before.
func TestLossWiped(t *testing.T) {
	rdb := startRedis(t)
	opts := redisqueue.Options{CheckInterval: 10 * time.Millisecond, DeliveryLag: time.Nanosecond}
	a, b := newQueue(t, rdb, opts), newQueue(t, rdb, opts)
	ctx := context.Background()
	first := delivery("a", "")
	put(t, a, first)
	if err := a.Ack(ctx, queuetest.Take(t, a).ID); err != nil {
		t.Fatal(err)
	}
	pending := delivery("b", "")
	last := put(t, b, pending)
	time.Sleep(50 * time.Millisecond) // a few good checks
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for _, q := range []*redisqueue.Queue{a, b} {
		since := waitLoss(t, q)
		// The pending delivery arrived after the mark: catch-up from it
		// finds that event again.
		if since.After(pending.ReceivedAt.Add(10*time.Millisecond)) || since.Before(first.ReceivedAt.Add(-time.Second)) {
			t.Errorf("loss reported since %v; want at or before the pending delivery's arrival %v", since, pending.ReceivedAt)
		}
		if f := q.Faults(); f.Losses != 1 {
			t.Errorf("Faults = %+v, want one loss", f)
		}
	}
	id := put(t, a, delivery("c", ""))
	if id <= last {
		t.Fatalf("id %d after the loss, want above %d", id, last)
	}
	if d := queuetest.Take(t, b); d.ID != id {
		t.Fatalf("Take after the loss = %d, want %d", d.ID, id)
	}
}

// A failover to a replica that lagged: the data set is there but older
// than what the receiver saw. The loss is reported from a good check the
// old data set still covers, less the default DeliveryLag.
func TestLossWentBack(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{CheckInterval: 10 * time.Millisecond})
	ctx := context.Background()
	put(t, q, delivery("a", ""))
	time.Sleep(50 * time.Millisecond)
	before := time.Now()
	time.Sleep(20 * time.Millisecond)
	put(t, q, delivery("b", ""))
	put(t, q, delivery("c", ""))
	time.Sleep(50 * time.Millisecond)
	if err := rdb.Set(ctx, prefix+"seq", 1, 0).Err(); err != nil { // the replica had only a
		t.Fatal(err)
	}
	since := waitLoss(t, q)
	if since.After(before.Add(-time.Minute)) {
		t.Fatalf("loss reported since %v, want a DeliveryLag before b and c were stored (%v)", since, before)
	}
	if id := put(t, q, delivery("d", "")); id <= 3 {
		t.Fatalf("id %d after the loss, want above 3", id)
	}
}

// A data set that went back is caught by the Puts too, even when later
// Puts carry the sequence past what the receiver saw before its next check
// runs (a Redis restarted from an AOF that missed its last writes, under a
// flood of deliveries).
func TestLossSeenByPut(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{CheckInterval: time.Hour})
	for _, k := range []string{"a", "b", "c"} {
		put(t, q, delivery(k, ""))
	}
	if err := rdb.Set(context.Background(), prefix+"seq", 0, 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"d", "e", "f", "g", "h"} {
		put(t, q, delivery(k, ""))
	}
	waitLoss(t, q)
	if f := q.Faults(); f.Losses != 1 {
		t.Fatalf("Faults = %+v, want one loss", f)
	}
}

func waitLoss(t *testing.T, q *redisqueue.Queue) time.Time {
	t.Helper()
	select {
	case since := <-q.Losses():
		return since
	case <-time.After(10 * time.Second):
		t.Fatal("no loss reported")
		return time.Time{}
	}
}

// A stalled Redis (SIGSTOP) does not hold Put past its context, whatever
// the client's own timeouts; the check fails too.
func TestStalledPut(t *testing.T) {
	s := redistest.Start(t, false)
	rdb := s.Client(&redis.Options{ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	q := newQueue(t, rdb, redisqueue.Options{})
	s.Signal(syscall.SIGSTOP)
	defer s.Signal(syscall.SIGCONT)
	for _, op := range []func(context.Context) error{
		func(ctx context.Context) error { return q.Put(ctx, delivery("a", "")) },
		q.Check,
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err := op(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("with Redis stopped: %v, want the context's deadline", err)
		}
	}
	s.Signal(syscall.SIGCONT)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The Put cut short may land once Redis runs again: the sender's repeat
	// is then a duplicate.
	if err := q.Put(ctx, delivery("a", "")); err != nil && !errors.Is(err, webhook.ErrDuplicate) {
		t.Fatal(err)
	}
}

// The bound holds over HTTP too: hundreds of concurrent deliveries to a
// Handler on a bounded queue, with no worker draining it. Those past the
// bound are not stored, and are closed without an answer, so that the
// server sends them again.
func TestBoundConcurrentHTTP(t *testing.T) {
	rdb := startRedis(t)
	const bound, deliveries = 50, 300
	q := newQueue(t, rdb, redisqueue.Options{MaxPending: bound})
	h, err := webhook.NewHandler(webhook.Options{Queue: q, OnIssue: func(context.Context, *webhook.IssueEvent) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered, closed := 0, 0
	for i := range deliveries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := send(addr, issueBody(i+1, 0))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				answered++
			case strings.Contains(err.Error(), "EOF"):
				closed++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	n, _ := rdb.XLen(context.Background(), prefix+"stream").Result()
	st := h.Stats()
	t.Logf("%d concurrent deliveries, bound %d: %d answered 200, %d closed without an answer, %d in the stream; %+v",
		deliveries, bound, answered, closed, n, st)
	if answered != bound || closed != deliveries-bound || n != bound || st.Accepted != bound || st.AskedAgain != deliveries-bound {
		t.Fatalf("answered %d, closed %d, stream %d; want %d, %d, %d", answered, closed, n, bound, deliveries-bound, bound)
	}
}
