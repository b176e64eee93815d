package redisqueue_test

import (
	"context"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/catchup"
	"github.com/redis/go-redis/v9"
)

// Every receiver behind the load balancer runs the same code: they share
// the queue, its dedup keys and its catch-up checkpoints. Should Redis lose
// its data, each receiver catches up from the API.
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	client, err := collab.NewClient("https://code.example.com", collab.WithPrivateToken(os.Getenv("COLLAB_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	// Short timeouts, which follow the context: a stalled Redis then holds
	// no connection for long.
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ReadTimeout: 2 * time.Second,
		WriteTimeout: 2 * time.Second, ContextTimeoutEnabled: true})
	defer rdb.Close()
	q, err := redisqueue.New(ctx, rdb, redisqueue.Options{Logger: slog.Default()})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	projects := catchup.Options{Projects: []catchup.Project{catchup.Path("shop/webshop")}}
	h, err := webhook.NewHandler(webhook.Options{
		Queue: q,
		OnIssue: func(ctx context.Context, e *webhook.IssueEvent) error {
			log.Printf("issue %d: %s", e.ObjectAttributes.IID, e.ObjectAttributes.Action)
			return nil
		},
		OnLoss: catchup.OnLoss(client, projects),
	})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := catchup.Run(ctx, h, client, projects); err != nil {
		log.Print(err)
	}
	// Runs the workers, serves deliveries and /healthz, and stops cleanly.
	if err := webhook.ListenAndServe(ctx, ":8090", h); err != nil {
		log.Fatal(err)
	}
}
