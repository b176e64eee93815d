package diskqueue

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/webhook"
)

// TestBurstIsStoredNotDropped: 500 deliveries at once, a 50 ms callback and
// the disk queue: every one is stored and handled, none gets a final
// answer. On a loaded machine some may be asked for again, and stored when
// the sender tries again.
func TestBurstIsStoredNotDropped(t *testing.T) {
	const n = 500
	q := openDisk(t, t.TempDir(), Options{})
	defer q.Close()
	var log handledLog
	h := newHandler(t, webhook.Options{Queue: q, Workers: 16, OnIssue: func(ctx context.Context, e *webhook.IssueEvent) error {
		time.Sleep(50 * time.Millisecond)
		return log.record(ctx, e)
	}})
	running(t, h)
	srv := httptest.NewServer(h)
	defer srv.Close()
	s := newSender(t, srv.URL)
	s.deliverAll(n, n, nil)
	waitIdle(t, h)
	s.report(t, "burst", n, &log)
	t.Logf("%+v", h.Stats())
}

// TestMaxBytesAsksAgain: a delivery the store refuses for its bound is
// asked for again and counted, and what was stored before is still handled.
func TestMaxBytesAsksAgain(t *testing.T) {
	q := openDisk(t, t.TempDir(), Options{MaxBytes: 64 << 10})
	defer q.Close()
	h := newHandler(t, webhook.Options{Queue: q, OnIssue: func(context.Context, *webhook.IssueEvent) error { return nil }})
	template := readFile(t, "spec/issue.json")
	ok, full := 0, 0
	for id := 1; full == 0 && id < 10000; id++ {
		switch code := serve(h, issueRequest(issueBody(template, id))).Code; code {
		case http.StatusOK:
			ok++
		case askedAgain:
			full++
		default:
			t.Fatalf("answered %d", code)
		}
	}
	require.Equal(t, 1, full)
	assert.Equal(t, int64(1), h.Stats().AskedAgain)
	running(t, h)
	waitIdle(t, h)
	assert.Equal(t, int64(ok), h.Stats().Handled)
}

// TestConcurrentBoundOverHTTP: 200 deliveries at once to a queue bounded
// at 10 while the callback is held: 10 are stored, the others are asked
// for again, and stored once there is room; none is lost.
func TestConcurrentBoundOverHTTP(t *testing.T) {
	const n = 200
	q := openDisk(t, t.TempDir(), Options{MaxPending: 10})
	defer q.Close()
	release := make(chan struct{})
	var log handledLog
	h := newHandler(t, webhook.Options{Queue: q, Workers: 4, OnIssue: func(ctx context.Context, e *webhook.IssueEvent) error {
		<-release
		return log.record(ctx, e)
	}})
	running(t, h)
	srv := httptest.NewServer(h)
	defer srv.Close()
	s := newSender(t, srv.URL)
	done := make(chan struct{})
	go func() { s.deliverAll(n, n, nil); close(done) }()
	// A refusal is answered at once, an acceptance once its sync is done.
	require.Eventually(t, func() bool { st := h.Stats(); return st.AskedAgain >= n-10 && st.Accepted >= 10 }, time.Minute, time.Millisecond)
	assert.Equal(t, int64(10), h.Stats().Accepted, "the bound holds under concurrency")
	assert.LessOrEqual(t, q.Len(), 10)
	close(release)
	<-done
	waitIdle(t, h)
	s.report(t, "bound of 10, 200 at once", n, &log)
}
