package collab

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests against loopback servers that misbehave on purpose. Each asserts a
// bound (heap, requests) and the exact error, never a duration.

// heapPeak runs f while sampling HeapInuse and returns the largest growth
// over the heap in use before f.
func heapPeak(t *testing.T, f func()) uint64 {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > base && ms.HeapInuse-base > peak.Load() {
			peak.Store(ms.HeapInuse - base)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	f()
	sample()
	close(done)
	wg.Wait()
	return peak.Load()
}

// endless writes a JSON value that never ends: prefix, then unit forever,
// until the client hangs up. With gzip it compresses on the wire, whether or
// not the client asked for it.
func endless(prefix, unit string, gz bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Page", "1")
		w.Header().Set("X-Next-Page", "2")
		w.Header().Set("X-Total-Pages", "9")
		var out io.Writer = w
		if gz {
			w.Header().Set("Content-Encoding", "gzip")
			zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
			defer zw.Close()
			out = zw
		}
		chunk := []byte(prefix + strings.Repeat(unit, 64<<10/len(unit)))
		for {
			if _, err := out.Write(chunk); err != nil {
				return
			}
			chunk = chunk[len(prefix):]
		}
	}
}

func TestHostileBodiesStopAtTheCeiling(t *testing.T) {
	const ceiling = 4 << 20
	bodies := map[string]http.HandlerFunc{
		"endless array":       endless("[", `{"id":1,"name":"x"},`, false),
		"endless string":      endless(`{"id":1,"name":"`, "a", false),
		"endless record keys": endless(`{"id":1`, `,"k":1`, false),
		"gzip bomb":           endless("[", `{"id":1},`, true),
		"gzip bomb string":    endless(`{"name":"`, "aaaaaaaa", true),
	}
	calls := map[string]func(c *Client) error{
		"single record": func(c *Client) error { _, _, err := c.Projects.Get(context.Background(), 1); return err },
		"list":          func(c *Client) error { _, _, err := c.Projects.List(context.Background(), nil); return err },
		"iterator page": func(c *Client) error {
			for _, err := range c.Projects.All(context.Background(), &ListProjectsOptions{ListOptions: ListOptions{Prefetch: 4}}) {
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	for name, h := range bodies {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		// The default transport asks for gzip and inflates it itself; one
		// that does not ask gets gzip anyway from this server.
		for _, transport := range []string{"default", "no compression"} {
			opts := []ClientOption{WithoutRetries(), WithMaxResponseSize(ceiling)}
			if transport != "default" {
				opts = append(opts, WithHTTPClient(&http.Client{Transport: &http.Transport{DisableCompression: true}}))
			}
			c, err := NewClient(srv.URL, opts...)
			require.NoError(t, err)
			for callName, call := range calls {
				var err error
				grew := heapPeak(t, func() { err = call(c) })
				label := name + ", " + transport + ", " + callName
				assert.ErrorIs(t, err, ErrResponseTooLarge, label)
				var de *DecodeError
				assert.ErrorAs(t, err, &de, label)
				if err != nil {
					assert.Contains(t, err.Error(), "the limit is 4194304 bytes", label)
					assert.True(t, strings.HasPrefix(err.Error(), "GET /api/v3/projects"), label+": "+err.Error())
				}
				assert.LessOrEqual(t, grew, uint64(2*ceiling), "%s: heap grew %d bytes", label, grew)
				t.Logf("%s: peak heap growth %.1f MiB for a %d MiB ceiling", label, float64(grew)/(1<<20), ceiling>>20)
			}
		}
	}
}

func TestDefaultCeilingAndDeclaredLength(t *testing.T) {
	srv := httptest.NewServer(endless("[", `{"id":1},`, true))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, WithoutRetries())
	require.NoError(t, err)
	var callErr error
	grew := heapPeak(t, func() { _, _, callErr = c.Projects.List(context.Background(), nil) })
	require.ErrorIs(t, callErr, ErrResponseTooLarge)
	assert.Equal(t, "GET /api/v3/projects: decoding response: collab: response body too large: the limit is 33554432 bytes (WithMaxResponseSize)", callErr.Error())
	assert.LessOrEqual(t, grew, uint64(2*DefaultMaxResponseSize))
	t.Logf("default ceiling, gzip bomb: peak heap growth %.1f MiB", float64(grew)/(1<<20))

	// A declared length past the ceiling is refused before reading the body.
	var wrote atomic.Int64
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(1<<30))
		for i := 0; i < 1<<14; i++ {
			n, err := w.Write(bytes.Repeat([]byte(" "), 64<<10))
			wrote.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(big.Close)
	c, err = NewClient(big.URL, WithoutRetries(), WithMaxResponseSize(1<<20))
	require.NoError(t, err)
	_, _, err = c.Projects.Get(context.Background(), 1)
	assert.ErrorIs(t, err, ErrResponseTooLarge)

	_, err = NewClient(big.URL, WithMaxResponseSize(0))
	assert.ErrorIs(t, err, ErrInvalidArgument)
}

func TestCeilingAllowsABodyOfExactlyTheLimit(t *testing.T) {
	body := `[{"id":1}]`
	for _, gz := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if gz {
				w.Header().Set("Content-Encoding", "gzip")
				zw := gzip.NewWriter(w)
				io.WriteString(zw, body)
				zw.Close()
				return
			}
			io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		for limit, ok := range map[int64]bool{int64(len(body)): true, int64(len(body) - 1): false} {
			c, err := NewClient(srv.URL, WithoutRetries(), WithMaxResponseSize(limit),
				WithHTTPClient(&http.Client{Transport: &http.Transport{DisableCompression: true}}))
			require.NoError(t, err)
			ps, _, err := c.Projects.List(context.Background(), nil)
			if ok {
				require.NoError(t, err, "gzip %v", gz)
				assert.Len(t, ps, 1)
			} else {
				assert.ErrorIs(t, err, ErrResponseTooLarge, "gzip %v", gz)
			}
		}
	}
}

// Streams to the caller's writer are not capped, and not buffered either:
// 64 MiB through a 1 MiB ceiling with a small heap.
func TestDownloadsStreamPastTheCeiling(t *testing.T) {
	const size = 64 << 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("z"), 64<<10)
		for i := 0; i < size/len(chunk); i++ {
			w.Write(chunk)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, WithoutRetries(), WithMaxResponseSize(1<<20))
	require.NoError(t, err)
	var n countingWriter
	var callErr error
	grew := heapPeak(t, func() { _, callErr = c.Builds.Artifacts(context.Background(), 1, 2, &n) })
	require.NoError(t, callErr)
	assert.EqualValues(t, size, n)
	assert.LessOrEqual(t, grew, uint64(8<<20), "the download was not buffered")
}

type countingWriter int64

func (w *countingWriter) Write(p []byte) (int, error) { *w += countingWriter(len(p)); return len(p), nil }

func TestErrorBodiesKeepTheirOwnLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(http.StatusBadGateway)
		zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
		defer zw.Close()
		chunk := bytes.Repeat([]byte("<html>"), 10<<10)
		for {
			if _, err := zw.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	for _, hc := range []*http.Client{{}, {Transport: &http.Transport{DisableCompression: true}}} {
		c, err := NewClient(srv.URL, WithoutRetries(), WithHTTPClient(hc))
		require.NoError(t, err)
		var callErr error
		grew := heapPeak(t, func() { _, _, callErr = c.Projects.Get(context.Background(), 1) })
		var er *ErrorResponse
		require.ErrorAs(t, callErr, &er)
		assert.Len(t, er.Body, maxErrorBody)
		assert.LessOrEqual(t, grew, uint64(4<<20))
	}
}

// newCountingServer answers each request with h and counts them.
func newCountingServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, n int64)) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(w, r, n.Add(1))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func pageParam(r *http.Request) int {
	p, _ := strconv.Atoi(r.URL.Query().Get("page"))
	return max(p, 1)
}

func TestIterationsAlwaysEnd(t *testing.T) {
	cases := []struct {
		name     string
		serve    func(w http.ResponseWriter, r *http.Request, base string)
		prefetch int
		ids      []int
		requests int64
		err      string // "" for a clean end
	}{
		{
			name: "link next to the same page",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				w.Header().Set("Link", `<`+base+`/api/v3/projects?page=1&per_page=100>; rel="next"`)
				fmt.Fprintf(w, `[{"id":%d}]`, pageParam(r))
			},
			ids: []int{1}, requests: 1,
			err: "GET /api/v3/projects: collab: pagination loop: the next link points back to page 1, after page 1",
		},
		{
			name: "link next back to an earlier page",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				p := pageParam(r)
				next := p + 1
				if p == 3 {
					next = 2
				}
				w.Header().Set("Link", fmt.Sprintf(`<%s/api/v3/projects?page=%d&per_page=100>; rel="next"`, base, next))
				fmt.Fprintf(w, `[{"id":%d}]`, p)
			},
			ids: []int{1, 2, 3}, requests: 3,
			err: "GET /api/v3/projects: collab: pagination loop: the next link points back to page 2, after page 3",
		},
		{
			name: "link next cycling between cursors",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				cur := r.URL.Query().Get("cursor")
				next := map[string]string{"": "a", "a": "b", "b": "a"}[cur]
				w.Header().Set("Link", `<`+base+`/api/v3/projects?cursor=`+next+`>; rel="next"`)
				fmt.Fprintf(w, `[{"id":%d}]`, map[string]int{"": 1, "a": 2, "b": 3}[cur])
			},
			ids: []int{1, 2, 3}, requests: 3,
			err: "GET /api/v3/projects: collab: pagination loop: the next link points back to a page already fetched",
		},
		{
			name: "X-Page stuck at 1 with X-Next-Page 2",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				w.Header().Set("X-Page", "1")
				w.Header().Set("X-Next-Page", "2")
				w.Header().Set("X-Total-Pages", "5")
				io.WriteString(w, `[{"id":1}]`)
			},
			ids: []int{1}, requests: 2,
			err: "GET /api/v3/projects: collab: pagination loop: asked for page 2, the server answered page 1",
		},
		{
			name: "X-Page stuck at 1 with prefetch",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				w.Header().Set("X-Page", "1")
				w.Header().Set("X-Next-Page", "2")
				w.Header().Set("X-Total-Pages", "5")
				io.WriteString(w, `[{"id":1}]`)
			},
			prefetch: 4, ids: []int{1}, requests: 2,
			err: "GET /api/v3/projects: collab: pagination loop: asked for page 2, the server answered page 1",
		},
		{
			name: "X-Next-Page going backwards",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				p := pageParam(r)
				w.Header().Set("X-Page", strconv.Itoa(p))
				w.Header().Set("X-Next-Page", strconv.Itoa(map[int]int{1: 2, 2: 1}[p]))
				fmt.Fprintf(w, `[{"id":%d}]`, p)
			},
			ids: []int{1, 2}, requests: 2,
			err: "GET /api/v3/projects: collab: pagination loop: next page 1 after page 2",
		},
		{
			name: "absurd total, empty after page 1",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				p := pageParam(r)
				w.Header().Set("X-Page", strconv.Itoa(p))
				w.Header().Set("X-Next-Page", strconv.Itoa(p+1))
				w.Header().Set("X-Total-Pages", "2147483647")
				if p > 1 {
					io.WriteString(w, `[]`)
					return
				}
				io.WriteString(w, `[{"id":1}]`)
			},
			prefetch: 4, ids: []int{1}, requests: 2,
		},
		{
			name: "absurd total, three real pages",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				p := pageParam(r)
				w.Header().Set("X-Page", strconv.Itoa(p))
				w.Header().Set("X-Next-Page", strconv.Itoa(p+1))
				w.Header().Set("X-Total-Pages", "2147483647")
				if p > 3 {
					io.WriteString(w, `[]`)
					return
				}
				fmt.Fprintf(w, `[{"id":%d}]`, p)
			},
			// A sequential walk sends 4; the window may run min(Prefetch,
			// pages confirmed) = 3 past page 3: at most pages 4 to 6.
			prefetch: 4, ids: []int{1, 2, 3}, requests: -6,
		},
		{
			name: "pages of nulls only",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				p := pageParam(r)
				w.Header().Set("X-Page", strconv.Itoa(p))
				w.Header().Set("X-Next-Page", strconv.Itoa(p+1))
				if p == 1 {
					io.WriteString(w, `[null,{"id":1},null]`)
					return
				}
				io.WriteString(w, `[null,null]`)
			},
			ids: []int{1}, requests: 2,
		},
		{
			name: "link next to another list",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				w.Header().Set("Link", `<`+base+`/api/v3/users?page=2>; rel="next"`)
				io.WriteString(w, `[{"id":1}]`)
			},
			ids: []int{1}, requests: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var base string
			srv, n := newCountingServer(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
				w.Header().Set("Content-Type", "application/json")
				tc.serve(w, r, base)
			})
			base = srv.URL
			c, err := NewClient(srv.URL, WithoutRetries())
			require.NoError(t, err)
			var ids []int
			var last error
			for p, err := range c.Projects.All(context.Background(), &ListProjectsOptions{ListOptions: ListOptions{Prefetch: tc.prefetch}}) {
				if err != nil {
					last = err
					continue
				}
				require.NotNil(t, p)
				ids = append(ids, p.ID)
				require.Less(t, len(ids), 100, "the walk did not end")
			}
			assert.Equal(t, tc.ids, ids)
			if tc.requests > 0 {
				assert.Equal(t, tc.requests, n.Load(), "requests")
			} else {
				assert.LessOrEqual(t, n.Load(), -tc.requests, "requests")
				assert.GreaterOrEqual(t, n.Load(), int64(len(tc.ids)+1), "requests")
			}
			if tc.err == "" {
				assert.NoError(t, last)
				return
			}
			assert.ErrorIs(t, last, ErrPaginationLoop)
			if last != nil {
				assert.Equal(t, tc.err, last.Error())
			}
		})
	}
}

func TestNoNilRecords(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(200, `[null, {"id":2}, null]`)
	ps, _, err := c.Projects.List(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, ps, 1)
	assert.Equal(t, 2, ps[0].ID)

	m.Reply(200, `[null, {"id":2}]`)
	n := 0
	for p, err := range c.Projects.All(context.Background(), nil) {
		require.NoError(t, err)
		require.NotNil(t, p)
		n++
	}
	assert.Equal(t, 1, n)

	m.Reply(200, `null`)
	ps, _, err = c.Projects.List(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, ps)
}
