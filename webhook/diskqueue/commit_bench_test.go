package diskqueue

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/collabsvc/collab/webhook"
)

// BenchmarkGroupCommit compares the queue's own group commit (a writer
// goroutine committing what waits, at once) with bbolt's DB.Batch (which
// waits up to MaxBatchDelay, 10 ms, for a batch to fill) on the same
// store, 16 Puts in flight per CPU:
//
//	go test -run '^$' -bench GroupCommit -count 3 ./webhook/diskqueue/
func BenchmarkGroupCommit(b *testing.B) {
	b.Run("writer", func(b *testing.B) {
		benchPuts(b, func(q *Queue, d *webhook.Delivery) error { return q.Put(context.Background(), d) })
	})
	b.Run("db.Batch", func(b *testing.B) {
		benchPuts(b, func(q *Queue, d *webhook.Delivery) error {
			var id uint64
			err := q.db.Batch(func(tx *bolt.Tx) (err error) {
				// A refusal fails the whole batch under DB.Batch, which then
				// runs each function again alone: it is kept out of the
				// transaction's error here, as the writer does.
				id, err = q.put(tx, d)
				if refused(err) {
					return nil
				}
				return err
			})
			if err == nil {
				q.mu.Lock()
				q.s.Add(id, d.Partition)
				q.mu.Unlock()
			}
			return err
		})
	})
}

func benchPuts(b *testing.B, put func(*Queue, *webhook.Delivery) error) {
	q, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	body := make([]byte, 1500)
	var next atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			d := &webhook.Delivery{Key: fmt.Sprint("k", next.Add(1)), Body: body}
			if err := put(q, d); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "puts/s")
}
