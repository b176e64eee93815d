package webhook_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

// sendersPerCPU is how many deliveries the benchmark keeps in flight per
// CPU: a disk queue commits the deliveries waiting together, so its rate
// grows with the senders while the floor's does not.
var sendersPerCPU = flag.Int("senders-per-cpu", 16, "deliveries in flight per CPU in BenchmarkDeliveries")

// BenchmarkDeliveries measures deliveries answered per second over loopback,
// many at once, by a real http.Server: a plain handler that reads the body
// and answers 200 (the floor), then the Handler on each queue, with a
// callback that does nothing. Compare the deliveries/s of one run.
func BenchmarkDeliveries(b *testing.B) {
	template, err := os.ReadFile("testdata/spec/issue.json")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("floor", func(b *testing.B) {
		deliver(b, template, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusOK)
		}))
	})
	raw := webhook.Options{OnDelivery: func(context.Context, *webhook.Delivery) error { return nil }}
	typed := webhook.Options{OnIssue: func(context.Context, *webhook.IssueEvent) error { return nil }}
	for _, o := range []struct {
		name string
		opts webhook.Options
	}{{"", raw}, {"-typed", typed}} {
		b.Run("memory"+o.name, func(b *testing.B) {
			benchHandler(b, template, webhook.NewMemoryQueue(webhook.MemoryQueueOptions{}), o.opts)
		})
		b.Run("disk"+o.name, func(b *testing.B) {
			q, err := diskqueue.Open(b.TempDir(), diskqueue.Options{})
			if err != nil {
				b.Fatal(err)
			}
			benchHandler(b, template, q, o.opts)
		})
	}
}

func benchHandler(b *testing.B, template []byte, q webhook.Queue, opts webhook.Options) {
	defer q.Close()
	opts.Queue = q
	h, err := webhook.NewHandler(opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- h.Run(ctx) }()
	deliver(b, template, h)
	stop()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// deliver posts b.N distinct issue deliveries to h, -senders-per-cpu per CPU
// at a time.
func deliver(b *testing.B, template []byte, h http.Handler) {
	srv := httptest.NewServer(h)
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 1024}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	var next atomic.Int64
	b.SetParallelism(*sendersPerCPU)
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := bytes.Replace(template, []byte(`"id":4417`), fmt.Appendf(nil, `"id":%d`, next.Add(1)), 1)
			req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
			if err != nil {
				b.Error(err)
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(webhook.HeaderEvent, string(webhook.KindIssue))
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("answered %d", resp.StatusCode)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deliveries/s")
	// On a shared machine the wall clock varies with the neighbours' load;
	// the CPU time this process spent per delivery (sender included) varies
	// less.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/delivery")
}

// cpuTime returns the CPU time this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
