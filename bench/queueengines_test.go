package bench

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	bolt "go.etcd.io/bbolt"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

// BenchmarkQueueEngines sets the disk queue beside the two other designs it
// was chosen against, doing the same work, in one run: 16 goroutines per
// CPU each store a delivery, count an attempt and ack it. A put waits
// until it is on disk. A put writes the delivery's record, its body and its
// dedup key; an attempt rewrites the record; an ack deletes record and
// body.
//
//   - log: the queue itself, which appends the puts that wait to its log and
//     syncs them once; an attempt is written at once and an ack with the
//     next write, both synced with the next put.
//
//   - bbolt: what the earlier queue did, a writer that commits what waits as
//     one transaction, each commit syncing twice (its pages, then its meta
//     page); attempts and acks too.
//
//   - pebble: a put is a synced batch, and its commit pipeline syncs the
//     batches that wait together; an attempt and an ack are written to its
//     log unsynced, as the queue does. Its LSM tree turns the deletes into
//     tombstones compacted later.
//
//     go test -run '^$' -bench QueueEngines -benchtime 2s ./bench/
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
	b.Run("bbolt", func(b *testing.B) {
		s, err := openBoltStore(filepath.Join(b.TempDir(), "queue.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer s.close()
		engineCycles(b, func(i int64) error {
			id, err := s.put(&webhook.Delivery{Key: fmt.Sprint("k", i), Kind: webhook.KindIssue, Body: body})
			if err == nil {
				err = s.lease(id)
			}
			if err == nil {
				err = s.ack(id)
			}
			return err
		})
		b.ReportMetric(2*float64(s.commits.Load())/float64(b.N), "syncs/delivery")
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
			if err := db.Set(rec, record, pebble.NoSync); err != nil { // the attempt
				return err
			}
			ack := db.NewBatch()
			_ = ack.Delete(rec, nil)
			_ = ack.Delete(bod, nil)
			return ack.Commit(pebble.NoSync)
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

// boltStore is the write path of the earlier, bbolt-based queue: a writer
// goroutine commits the writes that wait, up to 1000, as one transaction.
type boltStore struct {
	db      *bolt.DB
	ops     chan *boltOp
	done    chan struct{}
	commits atomic.Int64
}

type boltOp struct {
	fn   func(tx *bolt.Tx) error
	err  error
	done chan struct{}
}

var boltBuckets = []string{"pending", "bodies", "keys"}

func openBoltStore(path string) (*boltStore, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range boltBuckets {
			if _, err := tx.CreateBucketIfNotExists([]byte(name)); err != nil {
				return err
			}
		}
		return nil
	})
	s := &boltStore{db: db, ops: make(chan *boltOp, 1000), done: make(chan struct{})}
	go s.writer()
	return s, err
}

func (s *boltStore) writer() {
	defer close(s.done)
	group := make([]*boltOp, 0, cap(s.ops))
	for op := range s.ops {
		group = append(group[:0], op)
		for len(group) < cap(group) && len(s.ops) > 0 {
			group = append(group, <-s.ops)
		}
		err := s.db.Update(func(tx *bolt.Tx) error {
			for _, name := range boltBuckets[:2] {
				tx.Bucket([]byte(name)).FillPercent = 1 // ids grow
			}
			for _, op := range group {
				if op.err = op.fn(tx); op.err != nil {
					return op.err
				}
			}
			return nil
		})
		s.commits.Add(1)
		for _, op := range group {
			if op.err == nil {
				op.err = err
			}
			close(op.done)
		}
	}
}

// write runs fn in the next commit and waits for it.
func (s *boltStore) write(fn func(tx *bolt.Tx) error) error {
	op := &boltOp{fn: fn, done: make(chan struct{})}
	s.ops <- op
	<-op.done
	return op.err
}

func (s *boltStore) put(d *webhook.Delivery) (id uint64, err error) {
	return id, s.write(func(tx *bolt.Tx) error {
		pending := tx.Bucket([]byte("pending"))
		if id, err = pending.NextSequence(); err != nil {
			return err
		}
		c := *d
		c.ID, c.Body = id, nil
		if err := putBoltRecord(pending, &c, crc(d.Body)); err != nil {
			return err
		}
		if err := tx.Bucket([]byte("bodies")).Put(idKey(id), d.Body); err != nil {
			return err
		}
		until := binary.BigEndian.AppendUint64(nil, uint64(time.Now().Add(webhook.DefaultDedupWindow).UnixNano()))
		return tx.Bucket([]byte("keys")).Put([]byte(d.Key), binary.BigEndian.AppendUint32(until, crc([]byte(d.Key))))
	})
}

// boltRecord is what the earlier queue kept for a delivery without its
// body: its fields and the body's checksum, as JSON behind a checksum.
type boltRecord struct {
	*webhook.Delivery
	BodySum uint32 `json:"body_crc32c"`
}

func putBoltRecord(b *bolt.Bucket, d *webhook.Delivery, bodySum uint32) error {
	js, err := json.Marshal(boltRecord{d, bodySum})
	if err != nil {
		return err
	}
	return b.Put(idKey(d.ID), append(binary.BigEndian.AppendUint32([]byte{1}, crc(js)), js...))
}

// lease counts an attempt: it reads the record and the body, and rewrites
// the record.
func (s *boltStore) lease(id uint64) error {
	return s.write(func(tx *bolt.Tx) error {
		pending := tx.Bucket([]byte("pending"))
		v := pending.Get(idKey(id))
		if len(v) < 5 {
			return fmt.Errorf("delivery %d missing", id)
		}
		r := boltRecord{Delivery: new(webhook.Delivery)}
		if err := json.Unmarshal(v[5:], &r); err != nil {
			return err
		}
		if body := tx.Bucket([]byte("bodies")).Get(idKey(id)); crc(body) != r.BodySum {
			return fmt.Errorf("body of %d damaged", id)
		}
		r.Attempt++
		return putBoltRecord(pending, r.Delivery, r.BodySum)
	})
}

func (s *boltStore) ack(id uint64) error {
	return s.write(func(tx *bolt.Tx) error {
		if err := tx.Bucket([]byte("bodies")).Delete(idKey(id)); err != nil {
			return err
		}
		return tx.Bucket([]byte("pending")).Delete(idKey(id))
	})
}

func (s *boltStore) close() {
	close(s.ops)
	<-s.done
	_ = s.db.Close()
}

func idKey(id uint64) []byte { return binary.BigEndian.AppendUint64(nil, id) }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
