package collab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLink(t *testing.T) {
	base := "https://h.example/api/v3/projects?page="
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"server order", `<` + base + `1>; rel="prev", <` + base + `3>; rel="next", <` + base + `1>; rel="first", <` + base + `9>; rel="last"`,
			map[string]string{"prev": base + "1", "next": base + "3", "first": base + "1", "last": base + "9"}},
		{"any order, extra params, no quotes", `<` + base + `9>; title="end"; rel=last,<` + base + `2>;rel=next`,
			map[string]string{"last": base + "9", "next": base + "2"}},
		{"spaces and single quotes", `  < ` + base + `2 >  ;  rel = 'next'  `, map[string]string{"next": base + "2"}},
		{"several rels", `<` + base + `1>; rel="first prev"`, map[string]string{"first": base + "1", "prev": base + "1"}},
		{"uppercase", `<` + base + `2>; REL="Next"`, map[string]string{"next": base + "2"}},
		{"garbage", `garbage, <<>>; ;; rel, <x; rel="next"`, map[string]string{}},
		{"no rel", `<` + base + `2>; title="x"`, map[string]string{}},
		{"empty", ``, map[string]string{}},
		{"comma inside params only", `<a>; rel="next",`, map[string]string{"next": "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, parseLink(tt.in))
		})
	}
}

func TestResponsePaginationHeaders(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(200, `[]`, "X-Total", "45", "X-Total-Pages", "3", "X-Per-Page", "20", "X-Page", "2", "X-Next-Page", "3", "X-Prev-Page", "1",
		"Link", `<https://collab.example.com/api/v3/projects?page=1>; rel="prev", <https://collab.example.com/api/v3/projects?page=3>; rel="next", <https://collab.example.com/api/v3/projects?page=1>; rel="first", <https://collab.example.com/api/v3/projects?page=3>; rel="last"`)
	resp, err := send(context.Background(), c, http.MethodGet, route("projects"), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, 45, resp.TotalItems)
	assert.Equal(t, 3, resp.TotalPages)
	assert.Equal(t, 20, resp.ItemsPerPage)
	assert.Equal(t, 2, resp.CurrentPage)
	assert.Equal(t, 3, resp.NextPage)
	assert.Equal(t, 1, resp.PreviousPage)
	assert.Equal(t, "https://collab.example.com/api/v3/projects?page=1", resp.FirstURL)
	assert.Equal(t, "https://collab.example.com/api/v3/projects?page=1", resp.PrevURL)
	assert.Equal(t, "https://collab.example.com/api/v3/projects?page=3", resp.NextURL)
	assert.Equal(t, "https://collab.example.com/api/v3/projects?page=3", resp.LastURL)

	m.Reply(200, `[]`, "X-Total", "", "X-Next-Page", "", "X-Prev-Page", "", "X-Page", "junk", "X-Per-Page", "-4")
	resp, err = send(context.Background(), c, http.MethodGet, route("projects"), nil, nil)
	require.NoError(t, err)
	assert.Zero(t, resp.TotalItems)
	assert.Zero(t, resp.NextPage)
	assert.Zero(t, resp.PreviousPage)
	assert.Zero(t, resp.CurrentPage)
	assert.Zero(t, resp.ItemsPerPage)
	assert.Empty(t, resp.NextURL)
}

type item struct {
	ID int `json:"id"`
}

type itemOptions struct {
	ListOptions
	State string `url:"state,omitempty"`
}

// pagedServer serves total items in pages as deployed servers do,
// with Link URLs on linkHost (the server's own host when empty).
func pagedServer(t *testing.T, total int, linkHost string, requests *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		q := r.URL.Query()
		per, _ := strconv.Atoi(q.Get("per_page"))
		if per < 1 {
			per = 20
		}
		pg, _ := strconv.Atoi(q.Get("page"))
		pg = max(pg, 1)
		pages := (total + per - 1) / per
		host := linkHost
		if host == "" {
			host = "http://" + r.Host
		}
		link := func(n int) string {
			q.Set("page", strconv.Itoa(n))
			return host + r.URL.Path + "?" + q.Encode()
		}
		w.Header().Set("X-Total-Pages", strconv.Itoa(pages))
		w.Header().Set("X-Page", strconv.Itoa(pg))
		w.Header().Set("X-Next-Page", "")
		links := fmt.Sprintf(`<%s>; rel="first", <%s>; rel="last"`, link(1), link(pages))
		if pg < pages {
			w.Header().Set("X-Next-Page", strconv.Itoa(pg+1))
			links = fmt.Sprintf(`<%s>; rel="next", `, link(pg+1)) + links
		}
		w.Header().Set("Link", links)
		w.Header().Set("X-Seen-State", q.Get("state"))
		items := []string{}
		for i := (pg-1)*per + 1; i <= min(pg*per, total); i++ {
			items = append(items, fmt.Sprintf(`{"id":%d}`, i))
		}
		fmt.Fprintf(w, "[%s]", join(items))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func join(items []string) string {
	out := ""
	for i, s := range items {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

func collect(t *testing.T, seq func(func(*item, error) bool)) ([]int, error) {
	t.Helper()
	var ids []int
	for it, err := range seq {
		if err != nil {
			return ids, err
		}
		ids = append(ids, it.ID)
	}
	return ids, nil
}

func seqIDs(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestAllFollowsEveryPage(t *testing.T) {
	for _, prefetch := range []int{0, 1, 3, 16} {
		var requests atomic.Int64
		srv := pagedServer(t, 250, "", &requests)
		c, err := NewClient(srv.URL, WithoutRetries())
		require.NoError(t, err)
		ids, err := collect(t, all[item](context.Background(), c, route("items"), &itemOptions{State: "opened"}, []IterOption{Prefetch(prefetch)}))
		require.NoError(t, err)
		assert.Equal(t, seqIDs(250), ids, "prefetch %d: all items, in order", prefetch)
		assert.EqualValues(t, 3, requests.Load(), "per_page=100 means three requests")
	}
}

func TestAllFallsBackToPageNumbersForForeignLinks(t *testing.T) {
	var requests, foreign atomic.Int64
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreign.Add(1)
		w.Write([]byte(`[]`))
	}))
	defer evil.Close()
	srv := pagedServer(t, 150, evil.URL, &requests)
	c, err := NewClient(srv.URL, WithPrivateToken(testToken), WithoutRetries())
	require.NoError(t, err)
	ids, err := collect(t, c.allItems(nil))
	require.NoError(t, err)
	assert.Equal(t, seqIDs(150), ids)
	assert.Zero(t, foreign.Load(), "no request may go to another host")
	assert.EqualValues(t, 2, requests.Load())
}

func (c *Client) allItems(opt *itemOptions, iopts ...IterOption) func(func(*item, error) bool) {
	return all[item](context.Background(), c, route("items"), opt, iopts)
}

func TestAllStopsWhenTheLoopBreaks(t *testing.T) {
	for _, prefetch := range []int{0, 4} {
		var requests atomic.Int64
		srv := pagedServer(t, 1000, "", &requests)
		c, err := NewClient(srv.URL, WithoutRetries())
		require.NoError(t, err)
		n := 0
		for it, err := range c.allItems(nil, Prefetch(prefetch)) {
			require.NoError(t, err)
			n++
			if it.ID == 150 {
				break
			}
		}
		assert.Equal(t, 150, n)
		if prefetch == 0 {
			assert.EqualValues(t, 2, requests.Load(), "a break in page 2 makes no third request")
		} else {
			assert.LessOrEqual(t, requests.Load(), int64(1+prefetch+1), "first page, the window, and at most one refill")
		}
	}
}

func TestAllYieldsErrorLast(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(200, `[{"id":1},{"id":2}]`, "X-Page", "1", "X-Next-Page", "2", "X-Total-Pages", "3")
	m.Reply(500, `{"message":"500 Internal Server Error"}`)
	ids, err := collect(t, c.allItems(nil))
	assert.Equal(t, []int{1, 2}, ids)
	assert.ErrorIs(t, err, ErrServer)
	assert.Equal(t, 2, m.Count())
	assert.Equal(t, "100", m.Last().Query.Get("per_page"))
	assert.Equal(t, "2", m.Last().Query.Get("page"))

	// The error is the last element: the loop sees nothing after it.
	c, m = newMockClient(t)
	m.Reply(404, `{"message":"404 Project Not Found"}`)
	var got []error
	for it, err := range c.allItems(nil) {
		assert.Nil(t, it)
		got = append(got, err)
	}
	require.Len(t, got, 1)
	assert.ErrorIs(t, got[0], ErrNotFound)

	// A path error surfaces without any request.
	c, m = newMockClient(t)
	for _, err := range all[item](context.Background(), c, route("projects/%s/items", 1.5), nil, nil) {
		assert.Error(t, err)
	}
	assert.Zero(t, m.Count())
}

func TestAllPrefetchErrorStopsInOrder(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		pg, _ := strconv.Atoi(r.URL.Query().Get("page"))
		w.Header().Set("X-Total-Pages", "6")
		w.Header().Set("X-Page", strconv.Itoa(pg))
		w.Header().Set("X-Next-Page", strconv.Itoa(pg+1))
		if pg == 3 {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"404 Not found"}`))
			return
		}
		fmt.Fprintf(w, `[{"id":%d}]`, pg)
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, WithoutRetries())
	require.NoError(t, err)
	ids, err := collect(t, c.allItems(nil, Prefetch(2)))
	assert.Equal(t, []int{1, 2}, ids, "pages before the failed one, in order")
	assert.ErrorIs(t, err, ErrNotFound)
}

func TestAllHonoursStartPageAndPerPage(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(200, `[{"id":7}]`)
	ids, err := collect(t, c.allItems(&itemOptions{ListOptions: ListOptions{Page: 4, PerPage: 5}}))
	require.NoError(t, err)
	assert.Equal(t, []int{7}, ids)
	assert.Equal(t, "4", m.Last().Query.Get("page"))
	assert.Equal(t, "5", m.Last().Query.Get("per_page"))
}

func TestAllContextCancelled(t *testing.T) {
	var requests atomic.Int64
	srv := pagedServer(t, 500, "", &requests)
	c, err := NewClient(srv.URL, WithoutRetries())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last error
	n := 0
	for it, err := range all[item](ctx, c, route("items"), nil, []IterOption{Prefetch(3)}) {
		if err != nil {
			last = err
			break
		}
		n++
		if it.ID == 100 {
			// Pages 2 to 4 are prefetched by now; let their answers
			// arrive, so that the walk holds a page fetched before the end.
			require.Eventually(t, func() bool { return requests.Load() >= 4 }, 5*time.Second, time.Millisecond)
			time.Sleep(50 * time.Millisecond)
			cancel()
		}
	}
	assert.True(t, errors.Is(last, context.Canceled), "got %v", last)
	assert.Equal(t, 100, n, "no page is handed out once ctx has ended, even one fetched before")
}

// TestPrefetchOpensFullWidthAtOnce: once page 1 names the total, the next
// Prefetch pages are all asked for before any of them is answered. The
// server holds every later page until that many requests wait at once.
func TestPrefetchOpensFullWidthAtOnce(t *testing.T) {
	const prefetch, pages = 4, 10
	var waiting, early atomic.Int64
	all4 := make(chan struct{})
	srv, n := newCountingServer(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
		p := pageParam(r)
		if p > 1 && waiting.Add(1) == prefetch {
			close(all4)
		}
		if p > 1 {
			select {
			case <-all4:
			case <-time.After(5 * time.Second): // not a measurement: a narrower window would hang here
				early.Add(1)
			}
		}
		w.Header().Set("X-Page", strconv.Itoa(p))
		w.Header().Set("X-Total-Pages", strconv.Itoa(pages))
		if p < pages {
			w.Header().Set("X-Next-Page", strconv.Itoa(p+1))
		}
		fmt.Fprintf(w, `[{"id":%d}]`, p)
	})
	c, err := NewClient(srv.URL, WithoutRetries())
	require.NoError(t, err)
	ids, err := collect(t, c.allItems(nil, Prefetch(prefetch)))
	require.NoError(t, err)
	assert.Equal(t, seqIDs(pages), ids)
	assert.EqualValues(t, pages, n.Load(), "one request a page")
	assert.Zero(t, early.Load(), "a page was answered before %d were asked for together", prefetch)
}

func TestPrefetchNegativeIsAnArgumentError(t *testing.T) {
	srv, n := newCountingServer(t, func(w http.ResponseWriter, r *http.Request, _ int64) { io.WriteString(w, `[]`) })
	c, err := NewClient(srv.URL, WithoutRetries())
	require.NoError(t, err)
	_, err = collect(t, c.allItems(nil, Prefetch(-1)))
	var ae *ArgumentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "Prefetch", ae.Arg)
	assert.Zero(t, n.Load(), "no request")

	// A nil option is skipped, as is Prefetch(0): one page at a time.
	ids, err := collect(t, c.allItems(nil, nil, Prefetch(0)))
	require.NoError(t, err)
	assert.Empty(t, ids)
	assert.EqualValues(t, 1, n.Load())
}
