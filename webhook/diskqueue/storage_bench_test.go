package diskqueue

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/collabsvc/collab/webhook"
)

// BenchmarkStorage sets the queue beside the write path of an append-only
// log, in one run: 32 goroutines each store a delivery, lease it and ack
// it, and every step waits until it is on disk. The log appends what waits
// as one write and syncs it once (group commit), with the lease and the
// ack as records; it keeps no index and reads nothing back, so it is the
// most such a design could reach on this disk. The queue commits what
// waits as one bbolt transaction, which syncs twice and writes the pages
// it changed in place.
//
//	go test -run '^$' -bench Storage -benchtime 3s -count 3 ./webhook/diskqueue/
func BenchmarkStorage(b *testing.B) {
	body := make([]byte, 1536)
	b.Run("bbolt", func(b *testing.B) {
		q, err := Open(b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer q.Close()
		cycles(b, func(i int64) error {
			if err := q.Put(context.Background(), &webhook.Delivery{Key: fmt.Sprint("k", i), Body: body}); err != nil {
				return err
			}
			d, err := q.Take(context.Background())
			if err != nil {
				return err
			}
			return q.Ack(context.Background(), d.ID)
		})
		b.ReportMetric(float64(q.commits.Load())/float64(b.N), "commits/delivery")
	})
	b.Run("log", func(b *testing.B) {
		l, err := openLog(filepath.Join(b.TempDir(), "log"))
		if err != nil {
			b.Fatal(err)
		}
		defer l.close()
		record := make([]byte, 400) // a delivery's record without its body
		cycles(b, func(i int64) error {
			for _, rec := range [][]byte{append(record, body...), record[:16], record[:8]} { // put, lease, ack
				if err := l.append(rec); err != nil {
					return err
				}
			}
			return nil
		})
		b.ReportMetric(float64(l.syncs.Load())/float64(b.N), "commits/delivery")
	})
}

// cycles runs b.N cycles, 32 at a time, and reports their rate.
func cycles(b *testing.B, cycle func(i int64) error) {
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

// benchLog is the write path of an append-only log with group commit: the
// first writer to find no sync under way writes what waits and syncs it
// for all of them.
type benchLog struct {
	f     *os.File
	mu    sync.Mutex
	cond  *sync.Cond
	buf   []byte // framed records waiting for the next write
	batch int64  // the batch buf belongs to
	done  int64  // the last batch on disk
	busy  bool   // a write and sync are under way
	err   error
	syncs atomic.Int64
}

func openLog(path string) (*benchLog, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	l := &benchLog{f: f, batch: 1}
	l.cond = sync.NewCond(&l.mu)
	return l, nil
}

// append frames rec (length and checksum) and returns once it is synced.
func (l *benchLog) append(rec []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = binary.BigEndian.AppendUint32(l.buf, uint32(len(rec)))
	l.buf = binary.BigEndian.AppendUint32(l.buf, checksum(rec))
	l.buf = append(l.buf, rec...)
	mine := l.batch
	for l.done < mine && l.err == nil {
		if l.busy {
			l.cond.Wait()
			continue
		}
		buf := l.buf
		l.buf, l.busy = nil, true
		l.batch++
		l.mu.Unlock()
		_, err := l.f.Write(buf)
		if err == nil {
			err = l.f.Sync()
		}
		l.syncs.Add(1)
		l.mu.Lock()
		l.busy, l.done, l.err = false, l.batch-1, err
		l.cond.Broadcast()
	}
	return l.err
}

func (l *benchLog) close() error { return l.f.Close() }
