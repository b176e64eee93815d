package redisqueue_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/queuetest"
	"github.com/redis/go-redis/v9"
)

func newQueue(t *testing.T, rdb *redis.Client, opts redisqueue.Options) *redisqueue.Queue {
	t.Helper()
	if opts.PollInterval == 0 {
		opts.PollInterval = 10 * time.Millisecond
	}
	q, err := redisqueue.New(context.Background(), rdb, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

func delivery(key, partition string) *webhook.Delivery {
	return &webhook.Delivery{
		Key: key, Partition: partition, Kind: webhook.KindIssue, ReceivedAt: time.Now().UTC().Truncate(time.Millisecond),
		Header: http.Header{"X-Gitlab-Event": {"Issue Hook"}}, Body: []byte(`{"object_kind":"issue"}`),
	}
}

func put(t *testing.T, q webhook.Queue, d *webhook.Delivery) uint64 {
	t.Helper()
	if err := q.Put(context.Background(), d); err != nil {
		t.Fatalf("Put(%s): %v", d.Key, err)
	}
	return d.ID
}

func TestPutTakeAck(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{})
	ctx := context.Background()
	in := delivery("issue/1/2016-06-21T09:14:07Z", "issue/1")
	in.Synthesized, in.Record = true, []byte(`{"id":1}`)
	id := put(t, q, in)
	if id == 0 {
		t.Fatal("Put left ID 0")
	}
	if err := q.Put(ctx, delivery(in.Key, "issue/1")); !errors.Is(err, webhook.ErrDuplicate) {
		t.Fatalf("second Put with the same key: %v, want ErrDuplicate", err)
	}
	if seen, err := q.Seen(ctx, in.Key); err != nil || !seen {
		t.Fatalf("Seen = %v, %v; want true", seen, err)
	}
	if seen, _ := q.Seen(ctx, "issue/2/x"); seen {
		t.Fatal("Seen reports a key never stored")
	}
	got := queuetest.Take(t, q)
	if got.ID != id || got.Attempt != 1 || got.Key != in.Key || string(got.Body) != string(in.Body) ||
		!got.ReceivedAt.Equal(in.ReceivedAt) || got.Header.Get("X-Gitlab-Event") != "Issue Hook" ||
		!got.Synthesized || string(got.Record) != `{"id":1}` {
		t.Fatalf("Take = %+v, want what was put, attempt 1", got)
	}
	if err := q.Ack(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := q.Ack(ctx, id); err == nil {
		t.Fatal("second Ack of the same delivery: no error")
	}
	if seen, _ := q.Seen(ctx, in.Key); !seen {
		t.Fatal("the dedup key went with the ack")
	}
	queuetest.NoneReady(t, q)
	if n, _ := rdb.XLen(ctx, "{collab:webhook}:stream").Result(); n != 0 {
		t.Fatalf("stream holds %d entries after the ack, want 0", n)
	}
}

func TestQueueFull(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{MaxPending: 2})
	put(t, q, delivery("a", ""))
	put(t, q, delivery("b", ""))
	d := delivery("c", "")
	if err := q.Put(context.Background(), d); !errors.Is(err, webhook.ErrQueueFull) {
		t.Fatalf("third Put: %v, want ErrQueueFull", err)
	}
	// Nothing of a refused delivery is kept, not even its dedup key.
	if seen, _ := q.Seen(context.Background(), "c"); seen {
		t.Fatal("the key of a refused delivery was recorded")
	}
	if err := q.Ack(context.Background(), queuetest.Take(t, q).ID); err != nil {
		t.Fatal(err)
	}
	put(t, q, d)
}

func TestPartitionOrder(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{})
	ctx := context.Background()
	first := put(t, q, delivery("i1", "issue/1"))
	second := put(t, q, delivery("i2", "issue/1"))
	other := put(t, q, delivery("m1", "merge_request/1"))

	if d := queuetest.Take(t, q); d.ID != first {
		t.Fatalf("first Take = %d, want %d", d.ID, first)
	}
	if d := queuetest.Take(t, q); d.ID != other {
		t.Fatalf("second Take = %d, want %d (another object runs in parallel)", d.ID, other)
	}
	queuetest.NoneReady(t, q) // the second event of issue 1 waits for the first

	// A retry holds the partition back until the retry succeeds.
	if err := q.Retry(ctx, first, time.Now().Add(100*time.Millisecond), "boom"); err != nil {
		t.Fatal(err)
	}
	d := queuetest.Take(t, q)
	if d.ID != first || d.Attempt != 2 || d.LastError != "boom" {
		t.Fatalf("Take after Retry = id %d attempt %d error %q, want %d, 2, boom", d.ID, d.Attempt, d.LastError, first)
	}
	if err := q.Ack(ctx, first); err != nil {
		t.Fatal(err)
	}
	if d := queuetest.Take(t, q); d.ID != second {
		t.Fatalf("Take after the ack = %d, want %d", d.ID, second)
	}
}

func TestDeadLetters(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{})
	ctx := context.Background()
	a := put(t, q, delivery("a", "build/1"))
	b := put(t, q, delivery("b", "build/1"))
	queuetest.Take(t, q)
	if err := q.DeadLetter(ctx, a, "gave up"); err != nil {
		t.Fatal(err)
	}
	// The partition goes on without the dead letter.
	if d := queuetest.Take(t, q); d.ID != b {
		t.Fatalf("Take = %d, want %d", d.ID, b)
	}
	dead, err := q.DeadLetters(ctx)
	if err != nil || len(dead) != 1 || dead[0].ID != a || dead[0].LastError != "gave up" || dead[0].Key != "a" {
		t.Fatalf("DeadLetters = %+v, %v; want delivery %d with its reason", dead, err, a)
	}
	// Requeued, it goes behind b, which is still leased.
	if err := q.Requeue(ctx, a); err != nil {
		t.Fatal(err)
	}
	queuetest.NoneReady(t, q)
	if err := q.Ack(ctx, b); err != nil {
		t.Fatal(err)
	}
	d := queuetest.Take(t, q)
	if d.Key != "a" || d.ID <= b || d.Attempt != 1 {
		t.Fatalf("Take = %s id %d attempt %d, want a, an id after %d, attempt 1", d.Key, d.ID, d.Attempt, b)
	}
	if err := q.DeadLetter(ctx, d.ID, "again"); err != nil {
		t.Fatal(err)
	}
	if err := q.Delete(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	if dead, _ := q.DeadLetters(ctx); len(dead) != 0 {
		t.Fatalf("DeadLetters after Delete = %d, want 0", len(dead))
	}
	for _, op := range []func(context.Context, uint64) error{q.Delete, q.Requeue} {
		if err := op(ctx, d.ID); !errors.Is(err, webhook.ErrNotDeadLettered) {
			t.Fatalf("on a deleted dead letter: %v", err)
		}
	}
	if err := q.Ack(ctx, 999); !errors.Is(err, webhook.ErrNotLeased) {
		t.Fatalf("Ack of an unknown delivery: %v, want ErrNotLeased", err)
	}
}

func TestDedupOff(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{DedupWindow: -1})
	put(t, q, delivery("a", ""))
	put(t, q, delivery("a", ""))
	if seen, err := q.Seen(context.Background(), "a"); err != nil || seen {
		t.Fatalf("Seen = %v, %v with dedup off", seen, err)
	}
}

// A Redis that went away is an error from every method, never a hang or a
// panic; the handler asks for such a delivery again: it closes the
// connection without an answer.
func TestRedisDown(t *testing.T) {
	server, kill := runRedis(t)
	// No retries, so that each failure comes at once.
	rdb := redis.NewClient(&redis.Options{Addr: server.Options().Addr, MaxRetries: -1, DialerRetries: 1})
	defer rdb.Close()
	q := newQueue(t, rdb, redisqueue.Options{})
	h, err := webhook.NewHandler(webhook.Options{Queue: q, OnIssue: func(context.Context, *webhook.IssueEvent) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	kill()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.Put(ctx, delivery("a", "")); err == nil {
		t.Fatal("Put with Redis down: no error")
	}
	if _, err := q.Take(ctx); err == nil || ctx.Err() != nil {
		t.Fatalf("Take with Redis down: %v, want an error before the deadline", err)
	}
	if _, err := q.DeadLetters(ctx); err == nil {
		t.Fatal("DeadLetters with Redis down: no error")
	}
	if _, err := q.Checkpoint(ctx, "x"); err == nil {
		t.Fatal("Checkpoint with Redis down: no error")
	}
	if _, err := q.Stats(ctx); err == nil {
		t.Fatal("Stats with Redis down: no error")
	}
	if err := q.Check(ctx); err == nil {
		t.Fatal("Check with Redis down: no error")
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	err = send(strings.TrimPrefix(srv.URL, "http://"), issueBody(1, 0))
	if err == nil || !strings.Contains(err.Error(), "EOF") || h.Stats().AskedAgain != 1 {
		t.Fatalf("delivery with Redis down: %v, asked again %d; want the connection closed without an answer, 1",
			err, h.Stats().AskedAgain)
	}
}

// A failing callback is retried, then dead-lettered, through a Handler on
// the Redis queue; the dead letter can be requeued and is handled then.
func TestHandlerRetries(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{})
	var mu sync.Mutex
	attempts, fail := 0, true
	h, err := webhook.NewHandler(webhook.Options{Queue: q, MaxAttempts: 3, RetryMin: time.Millisecond, RetryMax: time.Millisecond,
		OnIssue: func(ctx context.Context, _ *webhook.IssueEvent) error {
			mu.Lock()
			defer mu.Unlock()
			attempts++
			if webhook.DeliveryFrom(ctx).Attempt != attempts {
				t.Errorf("attempt %d seen as %d", attempts, webhook.DeliveryFrom(ctx).Attempt)
			}
			if fail {
				return errors.New("boom")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Run(runCtx) }()
	defer func() { stop(); <-done }()

	srv := httptest.NewServer(h)
	defer srv.Close()
	if err := send(strings.TrimPrefix(srv.URL, "http://"), issueBody(1, 0)); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	dead, err := h.DeadLetters(ctx)
	if err != nil || len(dead) != 1 || dead[0].LastError != "boom" || dead[0].Attempt != 3 {
		t.Fatalf("DeadLetters = %+v, %v; want one after 3 attempts", dead, err)
	}
	mu.Lock()
	fail, attempts = false, 0
	mu.Unlock()
	if err := h.Requeue(ctx, dead[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := h.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if st := h.Stats(); st.Handled != 1 || st.DeadLettered != 1 || st.Retried != 2 {
		t.Fatalf("stats %+v, want 2 retries, 1 dead letter, then handled", st)
	}
}

func TestCheckpoint(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{})
	ctx := context.Background()
	if v, err := q.Checkpoint(ctx, "catchup"); err != nil || v != nil {
		t.Fatalf("Checkpoint before any = %q, %v; want nil", v, err)
	}
	if err := q.SetCheckpoint(ctx, "catchup", []byte(`{"t":1}`)); err != nil {
		t.Fatal(err)
	}
	other := newQueue(t, rdb, redisqueue.Options{})
	if v, err := other.Checkpoint(ctx, "catchup"); err != nil || string(v) != `{"t":1}` {
		t.Fatalf("Checkpoint from another receiver = %q, %v", v, err)
	}
}

func TestClose(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{})
	errc := make(chan error, 1)
	go func() {
		_, err := q.Take(context.Background())
		errc <- err
	}()
	time.Sleep(30 * time.Millisecond)
	q.Close()
	if err := <-errc; !errors.Is(err, webhook.ErrQueueClosed) {
		t.Fatalf("blocked Take after Close: %v, want ErrQueueClosed", err)
	}
	if err := q.Put(context.Background(), delivery("x", "")); !errors.Is(err, webhook.ErrQueueClosed) {
		t.Fatalf("Put after Close: %v", err)
	}
}

// A receiver that dies holding leases: a second one takes them over once the
// lease timeout has passed, in order, and counts the attempt.
func TestTakeover(t *testing.T) {
	rdb := startRedis(t)
	opts := redisqueue.Options{LeaseTimeout: 300 * time.Millisecond}
	dead := newQueue(t, rdb, opts)
	a := put(t, dead, delivery("a", "issue/9"))
	b := put(t, dead, delivery("b", "issue/9"))
	if d := queuetest.Take(t, dead); d.ID != a {
		t.Fatalf("Take = %d", d.ID)
	}
	dead.Close() // no ack: the receiver is gone

	alive := newQueue(t, rdb, opts)
	d := queuetest.Take(t, alive)
	if d.ID != a || d.Attempt != 2 {
		t.Fatalf("after takeover Take = %d attempt %d, want %d attempt 2", d.ID, d.Attempt, a)
	}
	if err := alive.Ack(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if d := queuetest.Take(t, alive); d.ID != b {
		t.Fatalf("Take = %d, want %d", d.ID, b)
	}
}

// Receivers that stopped holding nothing leave the consumer group.
func TestForgetsIdleReceivers(t *testing.T) {
	rdb := startRedis(t)
	// A lease long enough that a loaded machine still renews it in time.
	opts := redisqueue.Options{LeaseTimeout: 600 * time.Millisecond}
	gone := newQueue(t, rdb, opts)
	put(t, gone, delivery("a", ""))
	queuetest.Take(t, gone)
	gone.Close()
	ctx := context.Background()
	alive := newQueue(t, rdb, opts)
	d := queuetest.Take(t, alive) // taken over after the lease timeout
	if err := alive.Ack(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // gone is idle past a lease timeout now
	queuetest.NoneReady(t, alive)
	consumers, err := rdb.XInfoConsumers(ctx, "{collab:webhook}:stream", "receivers").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(consumers) != 1 || consumers[0].Name != alive.Consumer() {
		t.Fatalf("consumers %+v, want only %s", consumers, alive.Consumer())
	}
}

// A receiver restarted under its old name resumes its leases at once.
func TestRestartSameConsumer(t *testing.T) {
	rdb := startRedis(t)
	opts := redisqueue.Options{Consumer: "receiver-1", LeaseTimeout: time.Hour}
	q := newQueue(t, rdb, opts)
	id := put(t, q, delivery("a", "issue/1"))
	queuetest.Take(t, q)
	q.Close()
	again := newQueue(t, rdb, opts)
	if d := queuetest.Take(t, again); d.ID != id || d.Attempt != 2 {
		t.Fatalf("after restart Take = %d attempt %d, want %d attempt 2", d.ID, d.Attempt, id)
	}
}

// A live receiver renews its leases: another receiver does not take over
// work that is merely slow.
func TestRenewal(t *testing.T) {
	rdb := startRedis(t)
	opts := redisqueue.Options{LeaseTimeout: 150 * time.Millisecond}
	slow := newQueue(t, rdb, opts)
	id := put(t, slow, delivery("a", ""))
	queuetest.Take(t, slow)
	other := newQueue(t, rdb, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 4*opts.LeaseTimeout)
	defer cancel()
	if d, err := other.Take(ctx); err == nil {
		t.Fatalf("a live receiver's lease was taken over: %d", d.ID)
	}
	if err := slow.Ack(context.Background(), id); err != nil {
		t.Fatal(err)
	}
}

func TestOptions(t *testing.T) {
	if _, err := redisqueue.New(context.Background(), nil, redisqueue.Options{}); err == nil {
		t.Fatal("nil client accepted")
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for _, o := range []redisqueue.Options{{LeaseTimeout: -1}, {LeaseTimeout: time.Millisecond}} {
		if _, err := redisqueue.New(context.Background(), rdb, o); err == nil {
			t.Fatalf("New(%+v) accepted", o)
		}
	}
	_, err := redisqueue.New(context.Background(), rdb, redisqueue.Options{})
	if err == nil || !strings.Contains(err.Error(), "opening the queue") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("New with no server: %v", err)
	}
}

// The webhook package must not compile the Redis client.
func TestWebhookStaysLean(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/collabsvc/collab", "github.com/collabsvc/collab/webhook",
		"github.com/collabsvc/collab/runner").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "go-redis") {
		t.Fatal("the root, runner or webhook package depends on go-redis")
	}
}

// A settle that Redis did not take leaves the delivery pending there; this
// receiver hands it out again rather than renew a lease no worker holds.
func TestFailedSettleHandsOutAgain(t *testing.T) {
	rdb := startRedis(t)
	q := newQueue(t, rdb, redisqueue.Options{})
	id := put(t, q, delivery("a", "issue/1"))
	put(t, q, delivery("b", "issue/1"))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	settles := []struct {
		name   string
		settle func(uint64) error
	}{
		{"ack", func(id uint64) error { return q.Ack(cancelled, id) }},
		{"retry", func(id uint64) error { return q.Retry(cancelled, id, time.Now(), "boom") }},
		{"dead-letter", func(id uint64) error { return q.DeadLetter(cancelled, id, "boom") }},
	}
	for i, s := range settles {
		d := queuetest.Take(t, q)
		if d.ID != id || d.Attempt != i+1 {
			t.Fatalf("before the failed %s: took %d attempt %d, want %d attempt %d", s.name, d.ID, d.Attempt, id, i+1)
		}
		if err := s.settle(id); err == nil {
			t.Fatalf("%s with a cancelled context: no error", s.name)
		}
	}
	if d := queuetest.Take(t, q); d.ID != id {
		t.Fatalf("took %d, want %d again, ahead of its partition", d.ID, id)
	}
}
