package otelcollab_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/otelcollab"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/diskqueue"
)

// side is one way of running the same work: without an observer, with one
// on the global providers that nobody set (no-ops), and with the SDK
// recording every span and metric in memory.
type side struct {
	name string
	obs  *otelcollab.Observer // nil: none
}

func sides(b *testing.B) []side {
	noop, err := otelcollab.New()
	if err != nil {
		b.Fatal(err)
	}
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	sdk, err := otelcollab.New(otelcollab.WithTracerProvider(tp), otelcollab.WithMeterProvider(mp))
	if err != nil {
		b.Fatal(err)
	}
	// The exporter keeps what it receives: empty it now and then.
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				spans.Reset()
			}
		}
	}()
	b.Cleanup(func() { close(stop) })
	return []side{{"none", nil}, {"noprovider", noop}, {"sdk", sdk}}
}

// issuePage is 20 issues, each the API's example issue with its own id.
func issuePage(b *testing.B) []byte {
	one, err := os.ReadFile("../testdata/issues_issue.json")
	if err != nil {
		b.Fatal(err)
	}
	var page bytes.Buffer
	page.WriteByte('[')
	for i := 1; i <= 20; i++ {
		if i > 1 {
			page.WriteByte(',')
		}
		page.Write(bytes.Replace(bytes.TrimSpace(one), []byte(`"id": 77,`), fmt.Appendf(nil, `"id": %d,`, i), 1))
	}
	page.WriteByte(']')
	return page.Bytes()
}

// BenchmarkIssuePage lists a page of 20 issues over loopback and decodes
// it, the three sides interleaved call by call so that they share the
// machine's state; the ratios compare each observed side with none.
func BenchmarkIssuePage(b *testing.B) {
	page := issuePage(b)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(page)
	}))
	defer srv.Close()
	ss := sides(b)
	clients := make([]*collab.Client, len(ss))
	for i, s := range ss {
		opts := []collab.ClientOption{collab.WithPrivateToken("bench")}
		if s.obs != nil {
			opts = append(opts, collab.WithObserver(s.obs))
		}
		c, err := collab.NewClient(srv.URL, opts...)
		if err != nil {
			b.Fatal(err)
		}
		clients[i] = c
	}
	ctx := context.Background()
	m := newMeasure(len(ss))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range ss {
			k := (i + j) % len(ss)
			m.run(k, func() {
				issues, _, err := clients[k].Issues.List(ctx, 1, nil)
				if err != nil || len(issues) != 20 {
					b.Fatalf("%d issues, %v", len(issues), err)
				}
			})
		}
	}
	m.report(b, ss, b.N)
}

// BenchmarkDeliveries posts issue deliveries to a Handler on a memory queue
// and on a disk queue, 16 at a time, the sides in turn in rounds of 200 so
// that they share the machine's state.
func BenchmarkDeliveries(b *testing.B) {
	template, err := os.ReadFile("../webhook/testdata/spec/issue.json")
	if err != nil {
		b.Fatal(err)
	}
	for _, disk := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "disk"}[disk]
		b.Run(name, func(b *testing.B) { deliveries(b, template, disk) })
	}
}

func deliveries(b *testing.B, template []byte, disk bool) {
	ss := sides(b)
	targets := make([]string, len(ss))
	for i, s := range ss {
		targets[i] = startHandler(b, s.obs, disk)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024}}
	var next atomic.Int64
	m := newMeasure(len(ss))
	const round = 200
	b.ResetTimer()
	for done := 0; done < b.N; done += round {
		for j := range ss {
			k := (done/round + j) % len(ss)
			m.run(k, func() { sendRound(b, hc, targets[k], template, &next, min(round, b.N-done)) })
		}
	}
	m.report(b, ss, b.N)
}

func startHandler(b *testing.B, obs *otelcollab.Observer, disk bool) string {
	opts := webhook.Options{OnIssue: func(context.Context, *webhook.IssueEvent) error { return nil }}
	if disk {
		q, err := diskqueue.Open(b.TempDir(), diskqueue.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = q.Close() })
		opts.Queue = q
	}
	if obs != nil {
		opts.Observer = obs
	}
	h, err := webhook.NewHandler(opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	srv := httptest.NewServer(h)
	b.Cleanup(func() {
		srv.Close()
		stop()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
	return srv.URL
}

// sendRound posts n distinct deliveries, 16 at a time.
func sendRound(b *testing.B, hc *http.Client, url string, template []byte, next *atomic.Int64, n int) {
	sem := make(chan struct{}, 16)
	errs := make(chan error, n)
	for range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			body := bytes.Replace(template, []byte(`"id":4417`), fmt.Appendf(nil, `"id":%d`, next.Add(1)), 1)
			req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(webhook.HeaderEvent, string(webhook.KindIssue))
			resp, err := hc.Do(req)
			if err != nil {
				errs <- err
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				errs <- fmt.Errorf("answered %d", resp.StatusCode)
			}
		}()
	}
	for range cap(sem) {
		sem <- struct{}{}
	}
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// measure adds up the wall and CPU time of each side. On a shared machine
// the wall clock moves with the neighbours' load; the CPU time this process
// spent (servers and handlers included) moves less.
type measure struct{ wall, cpu []time.Duration }

func newMeasure(n int) *measure {
	return &measure{wall: make([]time.Duration, n), cpu: make([]time.Duration, n)}
}

func (m *measure) run(k int, fn func()) {
	start, cpu0 := time.Now(), cpuTime()
	fn()
	m.cpu[k] += cpuTime() - cpu0
	m.wall[k] += time.Since(start)
}

// report gives each side's wall time per operation, and its wall and CPU
// ratios to none.
func (m *measure) report(b *testing.B, ss []side, n int) {
	for k, s := range ss {
		b.ReportMetric(float64(m.wall[k].Nanoseconds())/float64(n), s.name+"-ns/op")
		if k == 0 {
			b.ReportMetric(float64(m.cpu[k].Nanoseconds())/float64(n), "none-cpu-ns/op")
		} else {
			b.ReportMetric(float64(m.wall[k])/float64(m.wall[0]), s.name+"/none-time")
			b.ReportMetric(float64(m.cpu[k])/float64(m.cpu[0]), s.name+"/none-cpu")
		}
	}
}

// cpuTime returns the CPU time this process used so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkObserverCall is the observer's own cost for one call (start and
// end, no retry), which the ratios above bury in the noise of a shared
// machine: compare it with the none-ns/op of BenchmarkIssuePage.
func BenchmarkObserverCall(b *testing.B) {
	ci := collab.CallInfo{Method: "GET", Route: "/projects/:id/issues", Host: "127.0.0.1:8080"}
	for _, s := range sides(b)[1:] {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				s.obs.CallEnded(s.obs.CallStarted(ctx, ci), collab.CallEnd{Status: 200, Attempts: 1})
			}
		})
	}
}

// BenchmarkObserverDelivery is the observer's own cost for one delivery:
// its admission, and one handling that succeeds.
func BenchmarkObserverDelivery(b *testing.B) {
	req := httptest.NewRequest(http.MethodPost, "/hook", nil)
	for _, s := range sides(b)[1:] {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := &webhook.Delivery{ID: 1, Kind: webhook.KindIssue, Header: http.Header{}, Attempt: 1}
				ctx := s.obs.DeliveryReceived(context.Background(), req)
				s.obs.Inject(ctx, d.Header)
				s.obs.DeliveryAdmitted(ctx, d.Kind, webhook.OutcomeAccepted)
				ctx = s.obs.HandlingStarted(context.Background(), d)
				s.obs.HandlingEnded(ctx, d, webhook.HandleDone, time.Millisecond, nil)
			}
		})
	}
}
