package redisqueue_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/catchup"
)

// TestCatchUpTwoReceivers: two receivers on one Redis queue catch up at the
// same time; the dedup keys in Redis let each change through once, and each
// is handled once.
func TestCatchUpTwoReceivers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rdb := startRedis(t)
	srv := collabtest.NewTestServer(t)
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	pid := srv.AddProject(srv.AdminID, "Webshop", 10)
	const changes = 20
	for i := range changes / 2 {
		issue := srv.AddIssue(pid, srv.AdminID, "Issue "+string(rune('a'+i)))
		srv.AddNote(pid, "Issue", issue, srv.AdminID, "A comment")
	}

	var mu sync.Mutex
	handled := map[string]int{}
	stats := make([]catchup.Stats, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		q := newQueue(t, rdb, redisqueue.Options{})
		count := func(ctx context.Context) error {
			mu.Lock()
			handled[webhook.DeliveryFrom(ctx).Key]++
			mu.Unlock()
			return nil
		}
		h, err := webhook.NewHandler(webhook.Options{Queue: q,
			OnIssue: func(ctx context.Context, _ *webhook.IssueEvent) error { return count(ctx) },
			OnNote:  func(ctx context.Context, _ *webhook.NoteEvent) error { return count(ctx) },
		})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- h.Run(runCtx) }()
		t.Cleanup(func() { stop(); <-done })
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			stats[i], err = catchup.Run(ctx, h, c, catchup.Options{Projects: catchup.IDs(pid), Since: time.Now().Add(-time.Hour)})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	admitted := 0
	for _, s := range stats {
		for _, n := range s.Admitted {
			admitted += n
		}
	}
	if admitted != changes || stats[0].Duplicates+stats[1].Duplicates != changes {
		t.Fatalf("admitted %d and skipped %d of %d changes read twice; want each admitted once", admitted,
			stats[0].Duplicates+stats[1].Duplicates, changes)
	}
	if err := newQueue(t, rdb, redisqueue.Options{}).WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(handled) != changes {
		t.Errorf("%d changes handled, want %d", len(handled), changes)
	}
	for k, n := range handled {
		if n != 1 {
			t.Errorf("%s handled %d times", k, n)
		}
	}
}
