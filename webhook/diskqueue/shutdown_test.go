package diskqueue

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook"
)

// receiver is one run of a receiver on the queue in dir, serving on its
// view of a handed-off socket.
type receiver struct {
	q      *Queue
	h      *webhook.Handler
	stop   context.CancelFunc
	served chan error
}

func startRun(t *testing.T, dir string, sock *handoff, log *handledLog) *receiver {
	q := openDisk(t, dir, Options{})
	h := newHandler(t, webhook.Options{Queue: q, Workers: 8, OnIssue: func(ctx context.Context, e *webhook.IssueEvent) error {
		time.Sleep(2 * time.Millisecond)
		return log.record(ctx, e)
	}})
	ctx, stop := context.WithCancel(context.Background())
	r := &receiver{q: q, h: h, stop: stop, served: make(chan error, 1)}
	go func() { r.served <- webhook.Serve(ctx, sock.view(), h) }()
	return r
}

// shutdown stops the receiver as a SIGTERM would, and closes its queue.
func (r *receiver) shutdown(t *testing.T) {
	r.stop()
	require.NoError(t, <-r.served)
	require.NoError(t, r.q.Close())
}

// TestShutdownUnderLoad: a receiver stopped while 16 senders deliver, and
// started again on the same queue and socket. Deliveries arriving during
// the stop are asked for again and stored by the next run; what the first
// run stored and did not handle is handled by the next. Nothing is lost,
// nothing gets a final answer.
func TestShutdownUnderLoad(t *testing.T) {
	const n = 600
	dir := t.TempDir()
	sock := newHandoff(t)
	var log handledLog
	first := startRun(t, dir, sock, &log)
	s := newSender(t, "http://"+sock.ln.Addr().String()+"/hook")
	var second *receiver
	s.deliverAll(n, 16, func() {
		first.shutdown(t)
		second = startRun(t, dir, sock, &log)
	})
	require.NoError(t, second.h.WaitIdle(context.Background()))
	second.shutdown(t)
	s.report(t, "stopped under load and restarted", n, &log)
	t.Logf("first run: %+v", first.h.Stats())
	t.Logf("second run: %+v", second.h.Stats())
	assert.Zero(t, first.h.Stats().Dropped+second.h.Stats().Dropped)
}

// stallWriter makes q's writer block before its next write, until the
// returned release is called, and returns once it is blocked there (a
// disk that does not complete a sync). A Put started here is what the
// writer blocks on.
func stallWriter(t *testing.T, q *Queue) (release func()) {
	stall, stalled := make(chan struct{}), make(chan struct{})
	var once sync.Once
	q.beforeWrite = func() error {
		once.Do(func() { close(stalled) })
		<-stall
		return nil
	}
	put := make(chan error, 1)
	go func() { put <- q.Put(context.Background(), &webhook.Delivery{Key: "stalled", Body: []byte("{}")}) }()
	<-stalled
	return func() {
		close(stall)
		require.NoError(t, <-put, "the write held by the stall completes")
	}
}

// TestStalledDiskAsksAgain: while the disk does not complete a sync (held
// here inside the writer), deliveries are asked for again after
// StoreTimeout instead of holding their connections, and Check reports the
// stall once it has lasted StallAfter; once the disk comes back, the
// sender's next tries are stored, and Close finishes. Nothing is lost.
func TestStalledDiskAsksAgain(t *testing.T) {
	const n = 40
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	var log handledLog
	h := newHandler(t, webhook.Options{Queue: q, StoreTimeout: 100 * time.Millisecond, OnIssue: log.record})
	running(t, h)
	srv := httptest.NewServer(h)
	defer srv.Close()
	release := stallWriter(t, q)
	s := newSender(t, srv.URL)
	done := make(chan struct{})
	go func() { s.deliverAll(n, n, nil); close(done) }()
	require.Eventually(t, func() bool { return h.Stats().StoreTimeouts >= n }, time.Minute, time.Millisecond)
	require.Eventually(t, func() bool { return !h.Health(context.Background()).Ready }, time.Minute, 10*time.Millisecond, "a stalled store is not ready")
	assert.ErrorContains(t, q.Check(context.Background()), "store stalled", "Check names the stall")
	release()
	<-done
	waitIdle(t, h)
	s.report(t, "disk stalled, then back", n, &log)
	t.Logf("%+v", h.Stats())
	require.NoError(t, q.Check(context.Background()), "the stall is over")
	require.NoError(t, q.Close())
}

// TestCloseWhileOutcomesAreWritten: Close while workers write attempts and
// outcomes at once: each call returns nil or ErrQueueClosed, and none
// writes to a closed file.
func TestCloseWhileOutcomesAreWritten(t *testing.T) {
	ctx := context.Background()
	q := openDisk(t, t.TempDir(), Options{})
	for i := range 200 {
		require.NoError(t, q.Put(ctx, &webhook.Delivery{Key: fmt.Sprint("k", i), Body: []byte("{}")}))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				d, err := q.Take(ctx)
				if err == nil {
					err = q.Retry(ctx, d.ID, time.Now(), "again")
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, q.Close())
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.ErrorIs(t, err, webhook.ErrQueueClosed)
	}
}
