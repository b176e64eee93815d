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
	"github.com/redis/go-redis/v9"
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
	project := srv.Seed.Project(srv.Admin, "Webshop", collab.InternalVisibility)
	pid := project.ID
	const changes = 20
	for i := range changes / 2 {
		issue := srv.Seed.Issue(project, srv.Admin, "Issue "+string(rune('a'+i)))
		srv.Seed.IssueNote(issue, srv.Admin, "A comment")
	}

	handled := &counter{n: map[string]int{}}
	stats := make([]catchup.Stats, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		h := runCounting(t, ctx, rdb, handled)
		wg.Go(func() {
			var err error
			stats[i], err = catchup.Run(ctx, h, c, catchup.Options{Projects: catchup.IDs(pid), Since: time.Now().Add(-time.Hour)})
			if err != nil {
				t.Error(err)
			}
		})
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
	handled.each(t, changes)
}

// counter counts the handlings of each delivery, by key.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) count(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[webhook.DeliveryFrom(ctx).Key]++
	return nil
}

// each checks that want deliveries were handled, each once.
func (c *counter) each(t *testing.T, want int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.n) != want {
		t.Errorf("%d changes handled, want %d", len(c.n), want)
	}
	for k, n := range c.n {
		if n != 1 {
			t.Errorf("%s handled %d times", k, n)
		}
	}
}

// runCounting runs, until the test ends, a Handler on the queue in rdb
// whose callbacks for issues and notes count what they handle.
func runCounting(t *testing.T, ctx context.Context, rdb *redis.Client, c *counter) *webhook.Handler {
	h, err := webhook.NewHandler(webhook.Options{Queue: newQueue(t, rdb, redisqueue.Options{}),
		OnIssue: func(ctx context.Context, _ *webhook.IssueEvent) error { return c.count(ctx) },
		OnNote:  func(ctx context.Context, _ *webhook.NoteEvent) error { return c.count(ctx) },
	})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- h.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-done })
	return h
}
