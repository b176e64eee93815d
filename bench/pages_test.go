package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowPages serves 50 pages of 100 projects, each answer delayed by latency,
// and records how many requests were in flight at once.
type slowPages struct {
	*httptest.Server
	requests, inFlight, maxInFlight atomic.Int64
}

func newSlowPages(tb testing.TB, latency time.Duration) *slowPages {
	sp := &slowPages{}
	const pages, per = 50, 100
	sp.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sp.requests.Add(1)
		n := sp.inFlight.Add(1)
		defer sp.inFlight.Add(-1)
		for {
			m := sp.maxInFlight.Load()
			if n <= m || sp.maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(latency) // the server's latency, not a measurement
		pg, _ := strconv.Atoi(r.URL.Query().Get("page"))
		pg = max(pg, 1)
		h := w.Header()
		h.Set("X-Total", strconv.Itoa(pages*per))
		h.Set("X-Total-Pages", strconv.Itoa(pages))
		h.Set("X-Per-Page", strconv.Itoa(per))
		h.Set("X-Page", strconv.Itoa(pg))
		h.Set("X-Prev-Page", "")
		h.Set("X-Next-Page", "")
		if pg < pages {
			h.Set("X-Next-Page", strconv.Itoa(pg+1))
			h.Set("Link", fmt.Sprintf(`<http://%s%s?page=%d&per_page=%d>; rel="next"`, r.Host, r.URL.Path, pg+1, per))
		}
		w.Write([]byte("["))
		for i := 0; i < per; i++ {
			if i > 0 {
				w.Write([]byte(","))
			}
			fmt.Fprintf(w, `{"id":%d,"name":"p"}`, (pg-1)*per+i+1)
		}
		w.Write([]byte("]"))
	}))
	tb.Cleanup(sp.Close)
	return sp
}

func listAll(tb testing.TB, c *collab.Client, prefetch int) []int {
	var ids []int
	for p, err := range c.Projects.All(context.Background(), nil, collab.Prefetch(prefetch)) {
		require.NoError(tb, err)
		ids = append(ids, p.ID)
	}
	return ids
}

// handPage gets one page by hand into the SDK's records and reads the total
// page count.
func handPage(ctx context.Context, hc *http.Client, base string, page int) ([]*collab.Project, int, error) {
	u := fmt.Sprintf("%s/api/v3/projects?page=%d&per_page=100", base, page)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("PRIVATE-TOKEN", token)
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, 0, err
	}
	var ps []*collab.Project
	if err := json.Unmarshal(b, &ps); err != nil {
		return nil, 0, err
	}
	total, _ := strconv.Atoi(resp.Header.Get("X-Total-Pages"))
	return ps, total, nil
}

// handPrefetch is the same walk written by hand: page 1, then the pages up
// to its X-Total-Pages with prefetch workers, the items taken in order. It
// trusts the total, which the SDK may not.
func handPrefetch(tb testing.TB, hc *http.Client, base string, prefetch int) []int {
	ctx := context.Background()
	first, total, err := handPage(ctx, hc, base, 1)
	require.NoError(tb, err)
	type result struct {
		ps  []*collab.Project
		err error
	}
	results := make([]chan result, total+1)
	for p := 2; p <= total; p++ {
		results[p] = make(chan result, 1)
	}
	pages := make(chan int)
	for range prefetch {
		go func() {
			for p := range pages {
				ps, _, err := handPage(ctx, hc, base, p)
				results[p] <- result{ps, err}
			}
		}()
	}
	go func() {
		for p := 2; p <= total; p++ {
			pages <- p
		}
		close(pages)
	}()
	var ids []int
	for _, p := range first {
		ids = append(ids, p.ID)
	}
	for p := 2; p <= total; p++ {
		r := <-results[p]
		require.NoError(tb, r.err)
		for _, p := range r.ps {
			ids = append(ids, p.ID)
		}
	}
	return ids
}

// BenchmarkAllPages lists 50 pages from a server with 20 ms of latency, one
// page at a time, with eight pages in flight, and with the same eight-page
// prefetch written by hand.
func BenchmarkAllPages(b *testing.B) {
	sp := newSlowPages(b, 20*time.Millisecond)
	for _, prefetch := range []int{0, 8} {
		b.Run(fmt.Sprintf("prefetch=%d", prefetch), func(b *testing.B) {
			c := sdkClient(b, sp.Server)
			for i := 0; i < b.N; i++ {
				if n := len(listAll(b, c, prefetch)); n != 5000 {
					b.Fatalf("got %d items", n)
				}
			}
		})
	}
	b.Run("hand/prefetch=8", func(b *testing.B) {
		hc := &http.Client{Transport: transport()}
		for i := 0; i < b.N; i++ {
			if n := len(handPrefetch(b, hc, sp.URL, 8)); n != 5000 {
				b.Fatalf("got %d items", n)
			}
		}
	})
}

// BenchmarkPrefetchVsHand walks the 50 pages with Prefetch(8) and by hand
// in turn, alternating which goes first, so that both meet the same noise
// of a shared machine, and reports the SDK's time as a multiple of the
// hand-written walk's.
func BenchmarkPrefetchVsHand(b *testing.B) {
	sp := newSlowPages(b, 20*time.Millisecond)
	c := sdkClient(b, sp.Server)
	hc := &http.Client{Transport: transport()}
	var sdk, hand time.Duration
	walk := func(f func() []int, total *time.Duration) {
		start := time.Now()
		if n := len(f()); n != 5000 {
			b.Fatalf("got %d items", n)
		}
		*total += time.Since(start)
	}
	sdkWalk := func() []int { return listAll(b, c, 8) }
	handWalk := func() []int { return handPrefetch(b, hc, sp.URL, 8) }
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			walk(sdkWalk, &sdk)
			walk(handWalk, &hand)
		} else {
			walk(handWalk, &hand)
			walk(sdkWalk, &sdk)
		}
	}
	b.ReportMetric(float64(sdk.Milliseconds())/float64(b.N), "sdk-ms/walk")
	b.ReportMetric(float64(hand.Milliseconds())/float64(b.N), "hand-ms/walk")
	b.ReportMetric(float64(sdk)/float64(hand), "sdk/hand")
}

// TestPrefetchIsConcurrentAndOrdered shows what makes the prefetching
// iterator faster, without timing it: up to Prefetch requests are in flight
// together, never more, and the items still arrive in order.
func TestPrefetchIsConcurrentAndOrdered(t *testing.T) {
	sp := newSlowPages(t, 20*time.Millisecond)
	c := sdkClient(t, sp.Server)
	ids := listAll(t, c, 8)
	require.Len(t, ids, 5000)
	for i, id := range ids {
		require.Equal(t, i+1, id, "in order")
	}
	assert.EqualValues(t, 50, sp.requests.Load(), "one request a page")
	assert.LessOrEqual(t, sp.maxInFlight.Load(), int64(8), "bounded by Prefetch")
	assert.GreaterOrEqual(t, sp.maxInFlight.Load(), int64(4), "pages overlap")

	sp.maxInFlight.Store(0)
	sp.requests.Store(0)
	require.Len(t, listAll(t, c, 0), 5000)
	assert.EqualValues(t, 1, sp.maxInFlight.Load(), "the sequential iterator has one request in flight")
}

// TestEarlyBreakStopsRequests: breaking in page N makes at most N+1 requests
// sequentially, and at most N+Prefetch with prefetching.
func TestEarlyBreakStopsRequests(t *testing.T) {
	sp := newSlowPages(t, 0)
	c := sdkClient(t, sp.Server)
	for _, prefetch := range []int{0, 4} {
		sp.requests.Store(0)
		n := 0
		for _, err := range c.Projects.All(context.Background(), nil, collab.Prefetch(prefetch)) {
			require.NoError(t, err)
			if n++; n == 250 { // in page 3
				break
			}
		}
		limit := int64(3 + 1)
		if prefetch > 0 {
			limit = int64(3 + prefetch)
		}
		assert.LessOrEqual(t, sp.requests.Load(), limit, "prefetch %d", prefetch)
	}
}
