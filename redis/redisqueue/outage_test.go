package redisqueue_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/redis/internal/redistest"
	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/catchup"
	"github.com/redis/go-redis/v9"
)

// The outage tests run the whole path: the fake server opens issues at a
// steady pace and delivers their hooks as deployed servers do (any answer
// is final; a read timeout or a close without an answer is sent again,
// here on a schedule shortened to milliseconds), through a round-robin
// balancer, to two receivers sharing one Redis with AOF on. Mid-run, Redis
// fails. The timeouts are scaled down and keep their order: a stall lasts
// longer than the sender waits, which is longer than the receivers' store
// deadline.
const (
	storeDeadline = 250 * time.Millisecond
	senderWait    = 2 * storeDeadline
	stall         = 3 * storeDeadline
	outageEvents  = 240
	eventEvery    = 4 * time.Millisecond
	backlog       = 300 * time.Millisecond
	// outageProjects is how many deliveries the server has in flight: one
	// per hook, and each project has one.
	outageProjects = 8
)

func TestOutageKillRestart(t *testing.T) {
	runOutage(t, false, func(r *rig) {
		r.redis.Kill()
		time.Sleep(2 * storeDeadline)
		r.redis.Restart(false)
	})
}

func TestOutageStall(t *testing.T) {
	runOutage(t, false, func(r *rig) {
		r.redis.Signal(syscall.SIGSTOP)
		time.Sleep(stall)
		r.redis.Signal(syscall.SIGCONT)
	})
}

// Redis comes back with no data: what it had acknowledged and not yet
// handed out is found again by the catch-up each receiver runs on the loss.
func TestOutageRestartEmpty(t *testing.T) {
	runOutage(t, true, func(r *rig) {
		r.redis.Kill()
		r.redis.Restart(true)
	})
}

// rig is the fake server, the balancer, two receivers and what they
// handled.
type rig struct {
	t        *testing.T
	redis    *redistest.Server
	api      *collabtest.Server
	client   *collab.Client
	projects []*collab.Project // each with a hook: the server delivers one event per hook at a time
	queues   []*redisqueue.Queue
	hs       []*webhook.Handler
	gate     sync.RWMutex // held from a while before the fault to its end: callbacks wait, so work is pending

	mu        sync.Mutex
	handled   map[int]int // issue id: handlings
	recovered int         // issues first handled from a synthesized event
}

// runOutage sends events at a steady pace, runs fault a third of the way,
// and reports; loss says whether the fault loses Redis's data.
func runOutage(t *testing.T, loss bool, fault func(*rig)) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := newRig(ctx, t)
	var created []int
	faulted := make(chan struct{})
	for i := range outageEvents {
		if i == outageEvents/3 {
			go func() {
				defer close(faulted)
				r.gate.Lock()
				defer r.gate.Unlock()
				time.Sleep(backlog) // deliveries stored and not handled when the fault comes
				fault(r)
			}()
		}
		p := r.projects[i%len(r.projects)]
		created = append(created, r.api.Seed.Issue(p, r.api.Admin, fmt.Sprintf("Issue %d", i)).ID)
		time.Sleep(eventEvery)
	}
	<-faulted
	if err := r.api.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	r.waitHandled(ctx, created)
	if losses := r.report(created); (losses > 0) != loss {
		t.Errorf("%d losses of Redis's data detected; want a loss: %v", losses, loss)
	}
}

func newRig(ctx context.Context, t *testing.T) *rig {
	r := &rig{t: t, redis: redistest.Start(t, true), api: collabtest.NewTestServer(t), handled: map[int]int{}}
	var err error
	if r.client, err = collab.NewClient(r.api.URL, collab.WithPrivateToken(r.api.AdminToken)); err != nil {
		t.Fatal(err)
	}
	var backends []string
	for i := range 2 {
		backends = append(backends, r.receiver(ctx, fmt.Sprintf("r%d", i)))
	}
	lb := balance(t, backends)
	for i := range outageProjects {
		p := r.api.Seed.Project(r.api.Admin, fmt.Sprintf("Shop %d", i), collab.InternalVisibility)
		_, _, err = r.client.Hooks.Add(ctx, p.ID, &collab.AddHookOptions{URL: "http://" + lb + "/",
			IssuesEvents: collab.Ptr(true), PushEvents: collab.Ptr(false)})
		if err != nil {
			t.Fatal(err)
		}
		r.projects = append(r.projects, p)
	}
	r.api.SetWebhookTimeout(senderWait)
	return r
}

// receiver starts one receiver on its own Redis client and returns its
// address. It catches up from the API on each loss its queue reports.
func (r *rig) receiver(ctx context.Context, name string) string {
	t := r.t
	rdb := r.redis.Client(&redis.Options{ReadTimeout: storeDeadline, WriteTimeout: storeDeadline, ContextTimeoutEnabled: true})
	q, err := redisqueue.New(ctx, rdb, redisqueue.Options{Consumer: name, LeaseTimeout: 3 * time.Second,
		PollInterval: 20 * time.Millisecond, CheckInterval: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))})
	if err != nil {
		t.Fatal(err)
	}
	var h *webhook.Handler
	h, err = webhook.NewHandler(webhook.Options{Queue: q, Workers: 4, StoreTimeout: storeDeadline,
		RetryMin: 10 * time.Millisecond, RetryMax: 100 * time.Millisecond, OnIssue: r.handle,
		OnLoss: func(ctx context.Context, h *webhook.Handler, since time.Time) error { // r.projects is filled after the receivers start
			ids := make([]int, len(r.projects))
			for i, p := range r.projects {
				ids[i] = p.ID
			}
			return catchup.OnLoss(r.client, catchup.Options{Projects: catchup.IDs(ids...)})(ctx, h, since)
		}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = webhook.Serve(serveCtx, l, h); close(done) }()
	t.Cleanup(func() { stop(); <-done; q.Close() })
	r.queues, r.hs = append(r.queues, q), append(r.hs, h)
	return l.Addr().String()
}

func (r *rig) handle(ctx context.Context, e *webhook.IssueEvent) error {
	r.gate.RLock()
	defer r.gate.RUnlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handled[e.ObjectAttributes.ID] == 0 && webhook.DeliveryFrom(ctx).Synthesized {
		r.recovered++
	}
	r.handled[e.ObjectAttributes.ID]++
	return nil
}

// waitHandled waits until every issue was handled, or a while longer.
func (r *rig) waitHandled(ctx context.Context, created []int) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		r.mu.Lock()
		n := 0
		for _, id := range created {
			if r.handled[id] > 0 {
				n++
			}
		}
		r.mu.Unlock()
		if n == len(created) {
			time.Sleep(200 * time.Millisecond) // late repeats show now
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// report prints the counts and fails on a lost event or a final answer
// other than 200; it returns the losses of Redis's data the receivers
// detected.
func (r *rig) report(created []int) int64 {
	type job struct {
		attempts, last int
		status         int
	}
	jobs := map[string]*job{}
	askedAgain := 0
	for _, d := range r.api.Deliveries() {
		j := jobs[string(d.Body)]
		if j == nil {
			j = &job{}
			jobs[string(d.Body)] = j
		}
		j.attempts++
		if d.Attempt > j.last {
			j.last, j.status = d.Attempt, d.Status
		}
	}
	answered, final := 0, 0
	for _, j := range jobs {
		askedAgain += j.attempts - 1
		if j.status == http.StatusOK {
			answered++
		} else {
			final++
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	handled, twice, lost := 0, 0, 0
	for _, id := range created {
		switch n := r.handled[id]; {
		case n == 0:
			lost++
		case n > 1:
			twice++
		}
		if r.handled[id] > 0 {
			handled++
		}
	}
	var losses, closed int64
	for i, q := range r.queues {
		losses += q.Faults().Losses
		closed += r.hs[i].Stats().AskedAgain
	}
	r.t.Logf("%d events: answered 200 %d; asked again %d; final answers %d; handled %d; handled twice %d; lost %d "+
		"(closed unanswered by the receivers %d; engine losses detected %d; events recovered by catch-up %d)",
		len(created), answered, askedAgain, final, handled, twice, lost, closed, losses, r.recovered)
	if lost != 0 || final != 0 {
		r.t.Errorf("lost %d, final answers other than 200 %d; want 0 and 0", lost, final)
		r.dump()
	}
	return losses
}

// balance starts a round-robin TCP balancer in front of backends: each
// connection goes to the next one, and a close on either side closes the
// other, as a layer-4 balancer does.
func balance(t *testing.T, backends []string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var next atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go pipe(c, backends[next.Add(1)%int64(len(backends))])
		}
	}()
	return l.Addr().String()
}

func pipe(c net.Conn, backend string) {
	defer c.Close()
	b, err := net.Dial("tcp", backend)
	if err != nil {
		return
	}
	defer b.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(b, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, b); done <- struct{}{} }()
	<-done
}

// dump logs what Redis holds, to tell a lost event from a stuck one.
func (r *rig) dump() {
	ctx := context.Background()
	rdb := r.redis.Client(nil)
	n, err := rdb.XLen(ctx, prefix+"stream").Result()
	r.t.Logf("stream length %d (%v)", n, err)
	pend, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: prefix + "stream", Group: "receivers", Start: "-", End: "+", Count: 100}).Result()
	r.t.Logf("pending %+v (%v)", pend, err)
	msgs, _ := rdb.XRange(ctx, prefix+"stream", "-", "+").Result()
	for _, m := range msgs {
		h, _ := rdb.HGetAll(ctx, fmt.Sprintf(prefix+"d:%v", m.Values["id"])).Result()
		delete(h, "b")
		delete(h, "m")
		r.t.Logf("entry %s %v: %v", m.ID, m.Values, h)
	}
	keys, _ := rdb.Keys(ctx, prefix+"p*").Result()
	for _, k := range keys {
		v, _ := rdb.Get(ctx, k).Result()
		r.t.Logf("%s = %s", k, v)
	}
}
