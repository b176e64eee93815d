package redisqueue_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/collabsvc/collab/redis/internal/redistest"
	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
	"github.com/redis/go-redis/v9"
)

// The rollback tests: receivers share one Redis queue; each stores
// deliveries, checks, stores more, checks again and stores more, and some
// deliveries are handled on the way. Then Redis loses data, or comes back
// with all of it. The tests run the receivers' checks themselves
// (CheckInterval is an hour), so that what each saw is exact. In the end,
// every delivery a Put accepted (answered 200, for a Handler) was handled,
// or is covered by a loss its receiver reported with a since at or before
// its arrival.

// rollback is one run: the primary Redis, the address the receivers' clients
// dial (which a failover moves), the receivers and what was handled.
type rollback struct {
	t       *testing.T
	redis   *redistest.Server
	target  atomic.Pointer[string]
	rs      []*rollbackReceiver
	handled map[string]bool
}

// rollbackReceiver is one receiver: its queue, the deliveries its Puts
// accepted, and the losses it reported.
type rollbackReceiver struct {
	name    string
	q       *redisqueue.Queue
	stored  []*webhook.Delivery
	reports []time.Time
	stopped bool // closed before the fault: its losses are for others to report
}

// rollbackCase is a fault: at is called where the data set may go back to,
// and returns the fault itself, run after more deliveries were stored.
type rollbackCase struct {
	name string
	aof  bool
	at   func(r *rollback) (fault func())
	lost bool // the fault loses deliveries
	// newReceiver starts a receiver after the fault, whose Puts reach
	// Redis before the others check.
	newReceiver bool
}

func TestRollback(t *testing.T) {
	restartFrom := func(r *rollback) func() {
		files := r.redis.Copy()
		return func() { r.redis.RestartFrom(files) }
	}
	for _, c := range []rollbackCase{
		{name: "restarted empty", at: func(r *rollback) func() { return func() { r.redis.Restart(true) } }, lost: true},
		{name: "restarted from an older snapshot", at: restartFrom, lost: true},
		{name: "AOF with its tail cut off", aof: true, at: restartFrom, lost: true},
		{name: "AOF with its tail cut off, then a new receiver", aof: true, at: restartFrom, lost: true, newReceiver: true},
		{name: "failover to a replica that lagged", at: func(r *rollback) func() {
			replica := r.replica()
			r.promote(replica) // it stops following here
			return func() { r.failover(replica) }
		}, lost: true},
		{name: "restarted from an AOF that lost nothing", aof: true, at: func(r *rollback) func() {
			return func() { r.redis.Kill(); r.redis.Restart(false) }
		}},
		{name: "restarted from a copy taken after the last write", aof: true, at: func(r *rollback) func() {
			return func() { restartFrom(r)() }
		}},
		{name: "failover to an up-to-date replica", at: func(r *rollback) func() {
			replica := r.replica()
			return func() { r.promote(replica); r.failover(replica) }
		}},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) { runRollback(t, c) })
	}
}

func runRollback(t *testing.T, c rollbackCase) {
	r := newRollback(t, c.aof)
	a, b := r.receiver("a"), r.receiver("b")
	r.putEach(20, a, b)
	r.handle(a, 5)
	r.check(a, b)
	fault := c.at(r)
	// Stored after the point the data set may go back to, some of it found
	// by a check, some of it handled.
	r.putEach(10, a, b)
	r.check(a, b)
	r.handle(b, 5)
	r.putEach(10, a, b)
	for _, rr := range r.rs {
		if len(rr.reports) != 0 {
			t.Fatalf("%s reported a loss before the fault: %v", rr.name, rr.reports)
		}
	}
	fault()
	if c.newReceiver {
		r.putEach(100, r.receiver("c"))
	}
	r.check(r.rs...)
	r.drain()
	r.verify(c.lost)
	if c.newReceiver && len(r.rs[2].reports) != 0 {
		t.Errorf("the receiver started after the fault, which lost nothing, reported %v", r.rs[2].reports)
	}
}

// A receiver that stops, and starts again after a loss that happened while
// it was down, knows nothing of what it stored before. A running receiver
// reports the loss when the data set went back before the newest delivery
// pending at its last check: here b's, stored after the point it goes back
// to.
func TestRollbackWhileStopped(t *testing.T) {
	r := newRollback(t, true)
	a, b := r.receiver("a"), r.receiver("b")
	r.putEach(20, a, b)
	r.check(a, b)
	files := r.redis.Copy()
	r.putEach(10, b)
	r.check(a)
	b.q.Close()
	b.stopped = true
	r.redis.RestartFrom(files)
	again := r.receiver("b")
	r.check(a, again)
	r.drain()
	r.verify(true)
	if len(a.reports) != 1 || len(again.reports) != 0 {
		t.Errorf("reports: a %v, b started again %v; want one from a", a.reports, again.reports)
	}
}

// A Put that finds its receiver's anchor gone asks for a check at once,
// long before CheckInterval, even after a new receiver's Puts carried the
// sequence past what the first one saw.
func TestRollbackSeenByPut(t *testing.T) {
	r := newRollback(t, true)
	a := r.receiver("a")
	r.putEach(5, a)
	r.check(a)
	files := r.redis.Copy()
	r.putEach(5, a)
	r.check(a)
	r.redis.RestartFrom(files)
	r.putEach(20, r.receiver("c"))
	r.putEach(1, a)
	since := waitLoss(t, a.q)
	if lost := a.stored[5]; since.After(lost.ReceivedAt) {
		t.Fatalf("loss since %v; want at or before %v, when the first lost delivery arrived", since, lost.ReceivedAt)
	}
}

// newRollback starts a Redis, with AOF or without persistence.
func newRollback(t *testing.T, aof bool) *rollback {
	r := &rollback{t: t, redis: redistest.Start(t, aof), handled: map[string]bool{}}
	addr := r.redis.Addr()
	r.target.Store(&addr)
	return r
}

// receiver starts a receiver on a client of its own, which dials the
// current target.
func (r *rollback) receiver(name string) *rollbackReceiver {
	rdb := redis.NewClient(&redis.Options{Addr: "primary", Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, *r.target.Load())
	}})
	r.t.Cleanup(func() { rdb.Close() })
	q := newQueue(r.t, rdb, redisqueue.Options{Consumer: name, CheckInterval: time.Hour, LeaseTimeout: 300 * time.Millisecond,
		DeliveryLag: time.Nanosecond})
	rr := &rollbackReceiver{name: name, q: q}
	r.rs = append(r.rs, rr)
	return rr
}

// putEach has each receiver store n deliveries of its own.
func (r *rollback) putEach(n int, rs ...*rollbackReceiver) {
	for range n {
		for _, rr := range rs {
			d := delivery(fmt.Sprintf("%s/%d", rr.name, len(rr.stored)), "")
			put(r.t, rr.q, d)
			rr.stored = append(rr.stored, d)
		}
	}
}

// check runs each receiver's check, and takes the losses it reported.
func (r *rollback) check(rs ...*rollbackReceiver) {
	r.t.Helper()
	for _, rr := range rs {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := rr.q.Check(ctx)
		cancel()
		if err != nil {
			r.t.Fatalf("%s's check: %v", rr.name, err)
		}
		select {
		case since := <-rr.q.Losses():
			rr.reports = append(rr.reports, since)
		default:
		}
	}
}

// handle has rr handle n deliveries.
func (r *rollback) handle(rr *rollbackReceiver, n int) {
	r.t.Helper()
	for range n {
		r.takeAck(rr, 5*time.Second)
	}
}

// takeAck takes one delivery through rr and acks it; false when none was
// ready within wait.
func (r *rollback) takeAck(rr *rollbackReceiver, wait time.Duration) bool {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	d, err := rr.q.Take(ctx)
	if err != nil {
		if wait >= time.Second {
			r.t.Fatalf("%s's Take: %v", rr.name, err)
		}
		return false
	}
	if err := rr.q.Ack(context.Background(), d.ID); err != nil {
		r.t.Fatalf("%s's Ack of %d: %v", rr.name, d.ID, err)
	}
	r.handled[d.Key] = true
	return true
}

// drain handles, through the running receivers in turn, everything left
// in the queue.
func (r *rollback) drain() {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := r.rs[0].q.Stats(context.Background())
		if err != nil {
			r.t.Fatal(err)
		}
		if n.Pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%d deliveries still pending", n.Pending)
		}
		for _, rr := range r.rs {
			if !rr.stopped {
				r.takeAck(rr, 50*time.Millisecond)
			}
		}
	}
}

// verify checks that every delivery stored was handled, or is covered by
// a loss reported by the receiver that stored it (by any receiver, for one
// that stopped), and that there were lost deliveries when lost says so,
// and no report otherwise.
func (r *rollback) verify(lost bool) {
	r.t.Helper()
	var all []time.Time
	for _, rr := range r.rs {
		all = append(all, rr.reports...)
		if f := rr.q.Faults(); f.Losses != int64(len(rr.reports)) {
			r.t.Errorf("%s: Faults %+v, %d losses reported", rr.name, f, len(rr.reports))
		}
	}
	total := 0
	for _, rr := range r.rs {
		reports, n := rr.reports, 0
		if rr.stopped {
			reports = all
		}
		for _, d := range rr.stored {
			if r.handled[d.Key] {
				continue
			}
			n++
			if !covered(reports, d.ReceivedAt) {
				r.t.Errorf("%s's delivery %s, arrived %v, was lost and no report covers it (reports %v)", rr.name, d.Key,
					d.ReceivedAt, reports)
			}
		}
		total += n
		r.t.Logf("%s: stored %d, lost %d, reported %v", rr.name, len(rr.stored), n, rr.reports)
		if !lost && len(rr.reports) > 0 {
			r.t.Errorf("%s reported a loss where nothing was lost: %v", rr.name, rr.reports)
		}
		if n > 0 && !rr.stopped && len(rr.reports) != 1 {
			r.t.Errorf("%s lost %d deliveries and reported %d losses, want 1", rr.name, n, len(rr.reports))
		}
	}
	if lost && total == 0 {
		r.t.Error("nothing was lost; the test proves nothing")
	}
}

// covered reports whether one of reports catches up from at or before t.
func covered(reports []time.Time, t time.Time) bool {
	for _, since := range reports {
		if !since.After(t) {
			return true
		}
	}
	return false
}

// replica starts a server that replicates the primary, and waits until it
// is in sync.
func (r *rollback) replica() *redistest.Server {
	r.t.Helper()
	replica := redistest.Start(r.t, false)
	host, port, _ := net.SplitHostPort(r.redis.Addr())
	if err := replica.Client(nil).Do(context.Background(), "REPLICAOF", host, port).Err(); err != nil {
		r.t.Fatal(err)
	}
	return replica
}

// promote waits until replica has every write the primary made so far, and
// makes it stop following the primary.
func (r *rollback) promote(replica *redistest.Server) {
	r.t.Helper()
	ctx := context.Background()
	primary := r.redis.Client(nil)
	// WAIT counts the replicas that have this connection's writes, and so
	// every write before them.
	if err := primary.Set(ctx, "sync", "x", 0).Err(); err != nil {
		r.t.Fatal(err)
	}
	if n, err := primary.Wait(ctx, 1, 10*time.Second).Result(); err != nil || n != 1 {
		r.t.Fatalf("WAIT: %d replicas in sync, %v", n, err)
	}
	if err := replica.Client(nil).Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		r.t.Fatal(err)
	}
}

// failover points the receivers' clients at replica and kills the
// primary, so that their connections break.
func (r *rollback) failover(replica *redistest.Server) {
	addr := replica.Addr()
	r.target.Store(&addr)
	r.redis.Kill()
}
