package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

// BenchmarkQueueEngines sets the disk queue beside Pebble doing the same
// work, in one run: 16 goroutines per CPU each store a delivery, count an
// attempt and ack it, and every step waits until it is on disk. The queue
// appends what waits to its log and syncs it once. Pebble commits each
// step as a synced batch: a put writes the delivery's record, its body and
// its dedup key; an attempt rewrites the record; an ack deletes record and
// body. Its commit pipeline syncs the batches that wait together, and its
// LSM tree turns the deletes into tombstones compacted later.
//
//	go test -run '^$' -bench QueueEngines -benchtime 2s ./bench/
func BenchmarkQueueEngines(b *testing.B) {
	body := make([]byte, 1536)
	b.Run("log", func(b *testing.B) {
		q, err := diskqueue.Open(b.TempDir(), diskqueue.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer q.Close()
		ctx := context.Background()
		engineCycles(b, func(i int64) error {
			if err := q.Put(ctx, &webhook.Delivery{Key: fmt.Sprint("k", i), Kind: webhook.KindIssue, Body: body}); err != nil {
				return err
			}
			d, err := q.Take(ctx)
			if err != nil {
				return err
			}
			return q.Ack(ctx, d.ID)
		})
	})
	b.Run("pebble", func(b *testing.B) {
		db, err := pebble.Open(b.TempDir(), &pebble.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		record := make([]byte, 300) // a delivery's fields, as the queue encodes them
		engineCycles(b, func(i int64) error {
			id := binary.BigEndian.AppendUint64(nil, uint64(i))
			rec, bod := append([]byte("r"), id...), append([]byte("b"), id...)
			put := db.NewBatch()
			_ = put.Set(rec, record, nil)
			_ = put.Set(bod, body, nil)
			_ = put.Set([]byte(fmt.Sprint("k", i)), id, nil)
			if err := put.Commit(pebble.Sync); err != nil {
				return err
			}
			if err := db.Set(rec, record, pebble.Sync); err != nil { // the attempt
				return err
			}
			ack := db.NewBatch()
			_ = ack.Delete(rec, nil)
			_ = ack.Delete(bod, nil)
			return ack.Commit(pebble.Sync)
		})
	})
}

// engineCycles runs b.N cycles, 16 goroutines per CPU, and reports their
// rate.
func engineCycles(b *testing.B, cycle func(i int64) error) {
	var next atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := cycle(next.Add(1)); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
}
