package collab

import (
	"context"
	"iter"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/google/go-querystring/query"
)

// ListOptions selects a page of a paginated list. The zero value asks for the
// server's defaults (page 1, 20 items).
type ListOptions struct {
	Page    int `url:"page,omitempty"`
	PerPage int `url:"per_page,omitempty"`

	// Prefetch is read only by the All iterators: once the total page count is
	// known they fetch up to Prefetch later pages concurrently, and still
	// yield items in order. Zero fetches one page at a time.
	Prefetch int `url:"-"`
}

// Response wraps the HTTP response with the pagination the server reported.
// Numbers the server did not send, or sent empty, are 0.
type Response struct {
	*http.Response

	TotalItems   int
	TotalPages   int
	ItemsPerPage int
	CurrentPage  int
	NextPage     int
	PreviousPage int

	// Link relations, as full URLs, or "" when absent.
	FirstURL, PrevURL, NextURL, LastURL string
}

func newResponse(r *http.Response) *Response {
	resp := &Response{Response: r}
	h := r.Header
	if len(h) == 0 {
		return resp
	}
	resp.TotalItems = headerInt(h, "X-Total")
	resp.TotalPages = headerInt(h, "X-Total-Pages")
	resp.ItemsPerPage = headerInt(h, "X-Per-Page")
	resp.CurrentPage = headerInt(h, "X-Page")
	resp.NextPage = headerInt(h, "X-Next-Page")
	resp.PreviousPage = headerInt(h, "X-Prev-Page")
	if link := h.Get("Link"); link != "" {
		links := parseLink(link)
		resp.FirstURL, resp.PrevURL, resp.NextURL, resp.LastURL = links["first"], links["prev"], links["next"], links["last"]
	}
	return resp
}

func headerInt(h http.Header, key string) int {
	v := h.Get(key)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// parseLink reads an RFC 8288 Link header leniently: parts in any order,
// extra parameters, optional quotes and spaces. What it cannot read it skips.
func parseLink(h string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(h, ",") {
		part = strings.TrimSpace(part)
		start, end := strings.IndexByte(part, '<'), strings.IndexByte(part, '>')
		if start != 0 || end < start {
			continue
		}
		target := strings.TrimSpace(part[start+1 : end])
		if target == "" || strings.ContainsAny(target, "<>") {
			continue
		}
		for _, param := range strings.Split(part[end+1:], ";") {
			key, value, ok := strings.Cut(param, "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(key), "rel") {
				continue
			}
			for _, rel := range strings.Fields(strings.Trim(strings.TrimSpace(value), `"'`)) {
				if rel = strings.ToLower(rel); isRelName(rel) {
					out[rel] = target
				}
			}
		}
	}
	return out
}

// isRelName accepts registered relation names such as "next"; anything
// else in a rel parameter is garbage.
func isRelName(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' && r != '.' {
			return false
		}
	}
	return s != ""
}

// allPageSize is the page size the iterators ask for: the contract's maximum.
const allPageSize = 100

// all iterates over every item of a paginated list. It follows Link next
// when it points at the client's own origin and falls back to page numbers
// otherwise; it makes no request after the loop breaks; an error is the last
// thing it yields.
func all[T any](ctx context.Context, c *Client, p apiPath, opt any) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		pager, err := newPager(c, p, opt)
		if err != nil {
			yield(nil, err)
			return
		}
		items, resp, err := fetchPage[T](ctx, c, pager.pageURL(pager.first))
		for {
			if err != nil {
				yield(nil, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if pager.prefetch > 1 && resp.TotalPages > resp.CurrentPage && resp.CurrentPage > 0 {
				prefetchPages(ctx, c, pager, resp.CurrentPage+1, resp.TotalPages, yield)
				return
			}
			next := pager.next(resp)
			if next == "" {
				return
			}
			items, resp, err = fetchPage[T](ctx, c, next)
		}
	}
}

type pager struct {
	c        *Client
	path     string
	query    url.Values
	first    int
	prefetch int
}

func newPager(c *Client, p apiPath, opt any) (*pager, error) {
	if p.err != nil {
		return nil, p.err
	}
	q, err := query.Values(opt)
	if err != nil {
		return nil, err
	}
	pg := &pager{c: c, path: p.s, query: q, first: max(1, atoiOrZero(q.Get("page")))}
	if q.Get("per_page") == "" {
		q.Set("per_page", strconv.Itoa(allPageSize))
	}
	if lo := listOptionsOf(opt); lo != nil {
		pg.prefetch = lo.Prefetch
	}
	return pg, nil
}

func atoiOrZero(s string) int { n, _ := strconv.Atoi(s); return n }

// listOptionsOf finds the ListOptions embedded in an options struct.
func listOptionsOf(opt any) *ListOptions {
	if v := reflect.ValueOf(opt); !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return nil
	}
	if h, ok := opt.(interface{ listOptions() *ListOptions }); ok {
		return h.listOptions()
	}
	return nil
}

func (o *ListOptions) listOptions() *ListOptions { return o }

func (p *pager) pageURL(page int) string {
	q := make(url.Values, len(p.query))
	for k, v := range p.query {
		q[k] = v
	}
	q.Set("page", strconv.Itoa(page))
	return p.path + "?" + q.Encode()
}

// next picks the following page: Link next on our own origin, else X-Next-Page.
func (p *pager) next(resp *Response) string {
	if resp.NextURL != "" {
		if u, err := url.Parse(resp.NextURL); err == nil && p.c.sameOrigin(u) {
			return resp.NextURL
		}
	}
	if resp.NextPage > resp.CurrentPage {
		return p.pageURL(resp.NextPage)
	}
	return ""
}

func fetchPage[T any](ctx context.Context, c *Client, path string) ([]*T, *Response, error) {
	req, err := c.NewRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, nil, err
	}
	var items []*T
	resp, err := c.Do(req, &items)
	return items, resp, err
}

type pageResult[T any] struct {
	items []*T
	err   error
}

// prefetchPages fetches pages from..to with at most pager.prefetch requests in
// flight, yielding in page order. When the loop breaks it cancels what is in
// flight and waits for it, so no goroutine outlives the iterator.
func prefetchPages[T any](ctx context.Context, c *Client, p *pager, from, to int, yield func(*T, error) bool) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()

	pending := make([]chan pageResult[T], 0, p.prefetch)
	launch := func(page int) {
		ch := make(chan pageResult[T], 1)
		pending = append(pending, ch)
		wg.Add(1)
		go func() {
			defer wg.Done()
			items, _, err := fetchPage[T](ctx, c, p.pageURL(page))
			ch <- pageResult[T]{items, err}
		}()
	}
	next := from
	for ; next <= to && len(pending) < p.prefetch; next++ {
		launch(next)
	}
	for len(pending) > 0 {
		res := <-pending[0]
		pending = pending[1:]
		if res.err != nil {
			yield(nil, res.err)
			return
		}
		for _, it := range res.items {
			if !yield(it, nil) {
				return
			}
		}
		if next <= to {
			launch(next)
			next++
		}
	}
}
