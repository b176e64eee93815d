package redisqueue_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/collabsvc/collab/redis/internal/redistest"
	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
)

// The handler's health follows the engine: unreachable, then up; its state
// lost, then recovered by the catch-up that OnLoss runs.
func TestHealthFollowsEngine(t *testing.T) {
	s := redistest.Start(t, true)
	q := newQueue(t, s.Client(nil), redisqueue.Options{CheckInterval: 20 * time.Millisecond})
	catchUp := make(chan time.Time, 1)
	release := make(chan struct{})
	h, err := webhook.NewHandler(webhook.Options{Queue: q, OnIssue: func(context.Context, *webhook.IssueEvent) error { return nil },
		RetryMin: 10 * time.Millisecond, RetryMax: 20 * time.Millisecond, OnLoss: heldCatchUp(catchUp, release)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Run(runCtx) }()
	defer func() { stop(); <-done }()
	waitReady := func(want bool, why string) webhook.Health {
		t.Helper()
		return waitHealth(t, ctx, h, want, why)
	}
	waitReady(true, "at start")
	put(t, q, delivery("a", ""))

	s.Restart(true) // empty: the engine forgot everything
	hs := waitReady(false, "after a restart with no data")
	select {
	case since := <-catchUp:
		if hs.LossSince == nil || since.After(time.Now()) {
			t.Errorf("loss since %v, health %v", since, hs.LossSince)
		}
	case <-ctx.Done():
		t.Fatal("OnLoss not called")
	}
	if h.Stats().Losses == 0 || q.Faults().Losses != 1 {
		t.Errorf("handler stats %+v, queue faults %+v; want the loss counted", h.Stats(), q.Faults())
	}
	close(release) // the catch-up succeeds
	waitReady(true, "after the catch-up")

	s.Kill()
	waitReady(false, "with Redis down")
	s.Restart(false)
	waitReady(true, "with Redis back")
}

// heldCatchUp is an OnLoss that sends the time it is asked to catch up
// from on catchUp (when it has room), and succeeds once release is closed.
func heldCatchUp(catchUp chan<- time.Time, release <-chan struct{}) func(context.Context, *webhook.Handler, time.Time) error {
	return func(ctx context.Context, _ *webhook.Handler, since time.Time) error {
		select {
		case catchUp <- since:
		default:
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitHealth waits until h's readiness is want, and checks that its health
// endpoint, which a load balancer or an orchestrator polls, agrees.
func waitHealth(t *testing.T, ctx context.Context, h *webhook.Handler, want bool, why string) webhook.Health {
	t.Helper()
	for {
		hs := h.Health(ctx)
		if hs.Ready == want {
			w := httptest.NewRecorder()
			h.HealthHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			t.Logf("%s: ready %v, /healthz %d, problems %q", why, hs.Ready, w.Code, hs.Problems)
			if (w.Code == http.StatusOK) != want {
				t.Errorf("%s: /healthz answered %d", why, w.Code)
			}
			return hs
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: still ready=%v: %q", why, hs.Ready, hs.Problems)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
