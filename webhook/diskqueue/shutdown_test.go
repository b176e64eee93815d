package diskqueue

import (
	"context"
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
