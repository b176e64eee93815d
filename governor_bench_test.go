package collab

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkGovernorCost measures what the governor costs a call when no
// limit is set: 64 goroutines get a project from a loopback server through
// two clients taking turns call by call, one with the governor (every
// client has one) and one without, so that the load of the machine falls
// on both alike. It reports the time per call of each and their ratio;
// "active" adds a client with limits set too high to ever wait, for the
// cost of the limits' bookkeeping.
func BenchmarkGovernorCost(b *testing.B) {
	project := []byte(`{"id":3,"name":"demo","path_with_namespace":"group/demo","default_branch":"main"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(project)
	}))
	defer srv.Close()
	newClient := func(opts ...ClientOption) *Client {
		tr := NewTransport()
		tr.MaxIdleConnsPerHost = 128
		c, err := NewClient(srv.URL, append([]ClientOption{WithPrivateToken("bench-token"), WithHTTPClient(&http.Client{Transport: tr})}, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	bare := newClient()
	bare.gov = nil // the client as it was before the governor
	sides := []struct {
		name string
		c    *Client
	}{
		{"governed", newClient()},
		{"bare", bare},
		{"active", newClient(WithRateLimit(1e9, 1e6), WithConcurrencyLimit(1<<20))},
	}
	var wall [3]atomic.Int64
	var n atomic.Int64
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for i := int(n.Add(1)); pb.Next(); i++ {
			k := i % len(sides)
			start := time.Now()
			if _, _, err := sides[k].c.Projects.Get(ctx, 3); err != nil {
				b.Error(err)
				return
			}
			wall[k].Add(int64(time.Since(start)))
		}
	})
	per := float64(b.N) / float64(len(sides))
	for k, s := range sides {
		b.ReportMetric(float64(wall[k].Load())/per, s.name+"-ns/call")
	}
	b.ReportMetric(float64(wall[0].Load())/float64(wall[1].Load()), "governed/bare")
	b.ReportMetric(float64(wall[2].Load())/float64(wall[1].Load()), "active/bare")
}

// BenchmarkGovernorPath is the governor's own work for one attempt with no
// limit set, without any I/O: acquire, hold and settle.
func BenchmarkGovernorPath(b *testing.B) {
	g := newGovernor(&clientConfig{retry: DefaultRetryPolicy()})
	resp := &http.Response{StatusCode: 200, Header: http.Header{}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.acquire(ctx); err != nil {
			b.Fatal(err)
		}
		g.hold(resp)
		g.settle(ctx, resp)
	}
}
