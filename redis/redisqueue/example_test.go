package redisqueue_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
	"github.com/redis/go-redis/v9"
)

// Every receiver behind the load balancer runs the same code: they share
// the queue, its dedup keys and its catch-up checkpoints.
func Example() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer rdb.Close()
	q, err := redisqueue.New(ctx, rdb, redisqueue.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	h, err := webhook.NewHandler(webhook.Options{
		Queue: q,
		OnIssue: func(ctx context.Context, e *webhook.IssueEvent) error {
			log.Printf("issue %d: %s", e.ObjectAttributes.IID, e.ObjectAttributes.Action)
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = h.Run(ctx) }()
	srv := &http.Server{Addr: ":8090", Handler: h, ReadHeaderTimeout: 5 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
