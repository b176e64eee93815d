package diskqueue

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

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

// TestStalledDiskAsksAgain: while the disk does not complete a commit
// (held here inside the writer), deliveries are asked for again after
// StoreTimeout instead of holding their connections; once the disk comes
// back, the sender's next tries are stored. Nothing is lost.
func TestStalledDiskAsksAgain(t *testing.T) {
	const n = 40
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	var log handledLog
	h := newHandler(t, webhook.Options{Queue: q, StoreTimeout: 100 * time.Millisecond, OnIssue: log.record})
	running(t, h)
	srv := httptest.NewServer(h)
	defer srv.Close()
	stall, stalled := make(chan struct{}), make(chan struct{})
	go func() {
		_ = q.write(context.Background(), func(*bolt.Tx) error { close(stalled); <-stall; return nil }, nil)
	}()
	<-stalled
	s := newSender(t, srv.URL)
	done := make(chan struct{})
	go func() { s.deliverAll(n, n, nil); close(done) }()
	require.Eventually(t, func() bool { return h.Stats().StoreTimeouts >= n }, time.Minute, time.Millisecond)
	require.Eventually(t, func() bool { return !h.Health(context.Background()).Ready }, time.Minute, 10*time.Millisecond, "a stalled store is not ready")
	close(stall)
	<-done
	waitIdle(t, h)
	s.report(t, "disk stalled, then back", n, &log)
	t.Logf("%+v", h.Stats())
}
