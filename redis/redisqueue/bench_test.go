package redisqueue_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/collabsvc/collab/redis/redisqueue"
	"github.com/collabsvc/collab/webhook"
)

// BenchmarkDeliveries: deliveries per second answered over loopback, many at
// once, by a plain handler that reads the body (the floor) and by a Handler
// storing each delivery in Redis before it answers. Compare the two of one
// run; they share the machine with the redis-server.
func BenchmarkDeliveries(b *testing.B) {
	b.Run("floor", func(b *testing.B) {
		deliverMany(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusOK)
		}))
	})
	b.Run("redis", func(b *testing.B) {
		rdb := startRedis(b)
		q, err := redisqueue.New(context.Background(), rdb, redisqueue.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer q.Close()
		h, err := webhook.NewHandler(webhook.Options{Queue: q, OnDelivery: func(context.Context, *webhook.Delivery) error { return nil }})
		if err != nil {
			b.Fatal(err)
		}
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- h.Run(ctx) }()
		deliverMany(b, h)
		stop()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	})
}

// deliverMany posts b.N distinct issue deliveries to h, 16 per CPU at a
// time, and reports deliveries/s. An answer other than 200 fails b.
func deliverMany(b *testing.B, h http.Handler) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer deliveries.CloseIdleConnections()
	addr := strings.TrimPrefix(srv.URL, "http://")
	var next atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := send(addr, issueBody(int(next.Add(1)), 0)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}
