package collab

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ListOptions selects a page of a paginated list. The zero value asks for the
// server's defaults (page 1, 20 items).
//
// List methods send Page and PerPage as given and return that one page. The
// All iterators start at Page (page 1 when zero), ask for PerPage items a
// page (100, the API's maximum, when zero) and then follow the server's
// pagination to the end.
//
// No list method or iterator hands out a nil record: a JSON null among the
// elements of a list is skipped.
//
// An iterator always ends. It never asks for a page it has already fetched,
// it stops at the first page with no records, and it ends with an error
// matching ErrPaginationLoop when the server points back to a page already
// seen or answers a page other than the one asked for.
type ListOptions struct {
	Page    int `url:"page,omitempty"`
	PerPage int `url:"per_page,omitempty"`
}

// An IterOption tunes how an All iterator walks the pages of a list. It has
// no effect on the List methods, which fetch one page.
type IterOption func(*iterConfig)

type iterConfig struct {
	prefetch int
}

// Prefetch lets an All iterator fetch up to n later pages concurrently once
// the first page reports its own number and the total page count (the
// X-Page and X-Total-Pages headers). Items still arrive in order.
//
// The total is only a hint: the iterator never asks past it, and it stops at
// the first empty page or at a page that names no next one. So a server that
// overstates its total costs at most n wasted requests: a walk makes at most
// pages+n requests. Breaking out of the loop cancels the requests in flight;
// once the iterator's context ends, it yields the context's error before any
// further page, even one already fetched.
// n of 0 or 1 fetches one page at a time; a negative n is an *ArgumentError,
// yielded by the iterator before any request.
func Prefetch(n int) IterOption {
	return func(c *iterConfig) { c.prefetch = n }
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

	// Waited is how long the call waited for the client's limits
	// (WithRateLimit, WithConcurrencyLimit, WithSharedLimiter) and for
	// pauses the server asked for with Retry-After. Backoff between
	// retries is not counted.
	Waited time.Duration
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

// allPageSize is the page size the iterators ask for: the API's maximum.
const allPageSize = 100

// all iterates over every item of a paginated list. It follows Link next
// when it points at the same list on the client's own origin and falls back
// to X-Next-Page otherwise; it makes no request after the loop breaks; an
// error is the last thing it yields, after the records of its page when only
// some of their values did not fit.
func all[T any](ctx context.Context, c *Client, p endpoint, opt any, iopts []IterOption) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		pg, err := newPager(c, p, opt, iopts)
		if err != nil {
			yield(nil, err)
			return
		}
		page, next := pg.first, pg.pageURL(pg.first)
		for {
			items, resp, err := fetchPage[T](ctx, c, pg.page(next))
			if partial(err) {
				yieldPartial(items, err, yield)
				return
			}
			if err == nil {
				err = pg.confirm(next, page, resp)
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if len(items) == 0 {
				return
			}
			if pg.prefetch > 1 && resp.TotalPages > page && resp.CurrentPage == page && hasNext(resp) {
				prefetchPages(ctx, c, pg, page, resp.TotalPages, items, yield)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			next, page, err = pg.next(resp)
			if err != nil {
				yield(nil, err)
				return
			}
			if next == "" {
				return
			}
		}
	}
}

// yieldPartial hands out the records of a page some of whose values did
// not fit, then its error (which wraps FieldErrors): the rule of the other
// calls. The error ends the walk, as every error does.
func yieldPartial[T any](items []*T, err error, yield func(*T, error) bool) {
	for _, it := range items {
		if !yield(it, nil) {
			return
		}
	}
	yield(nil, err)
}

// pager walks one list and remembers what it fetched, so that a server that
// sends it backwards or round in a circle ends the walk.
type pager struct {
	c        *Client
	path     string
	tmpl     string // the list's route template, for each page's call
	query    url.Values
	first    int
	prefetch int

	listPath string          // escaped path of the list, for Link next
	seen     map[string]bool // pages fetched, by path and sorted query
	last     int             // highest page number fetched
}

func newPager(c *Client, p endpoint, opt any, iopts []IterOption) (*pager, error) {
	if p.err != nil {
		return nil, p.err
	}
	var cfg iterConfig
	for _, o := range iopts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.prefetch < 0 {
		return nil, invalidArg("Prefetch", "must not be negative, got %d", cfg.prefetch)
	}
	q, err := encodeOpts(opt)
	if err != nil {
		return nil, err
	}
	pg := &pager{c: c, path: p.s, tmpl: p.tmpl, query: q, first: max(1, atoiOrZero(q.Get("page"))), prefetch: cfg.prefetch, seen: map[string]bool{}}
	if u, err := c.resolve(p.s); err == nil {
		pg.listPath = u.EscapedPath()
	}
	if q.Get("per_page") == "" {
		q.Set("per_page", strconv.Itoa(allPageSize))
	}
	return pg, nil
}

func atoiOrZero(s string) int { n, _ := strconv.Atoi(s); return n }

func (p *pager) pageURL(page int) string {
	q := make(url.Values, len(p.query))
	for k, v := range p.query {
		q[k] = v
	}
	q.Set("page", strconv.Itoa(page))
	return p.path + "?" + q.Encode()
}

// confirm records that the page at rawURL, asked for as page number asked
// (0 when unknown), was fetched, and refuses a server that answered an
// earlier page instead.
func (p *pager) confirm(rawURL string, asked int, resp *Response) error {
	p.seen[p.key(rawURL)] = true
	if asked > 0 && resp.CurrentPage > 0 && resp.CurrentPage < asked {
		return p.loopError("asked for page %d, the server answered page %d", asked, resp.CurrentPage)
	}
	p.last = max(p.last, asked, resp.CurrentPage)
	return nil
}

// next picks the following page: Link next to the same list on our own
// origin, else X-Next-Page. It returns "" at the end of the list, and an
// error when the next page is one already fetched.
func (p *pager) next(resp *Response) (string, int, error) {
	if link, ok := p.sameList(resp.NextURL); ok {
		n := atoiOrZero(link.Query().Get("page"))
		if n > 0 && n <= p.last {
			return "", 0, p.loopError("the next link points back to page %d, after page %d", n, p.last)
		}
		if p.seen[p.key(resp.NextURL)] {
			return "", 0, p.loopError("the next link points back to a page already fetched")
		}
		return resp.NextURL, n, nil
	}
	if resp.NextPage == 0 {
		return "", 0, nil
	}
	if resp.NextPage <= p.last {
		return "", 0, p.loopError("next page %d after page %d", resp.NextPage, p.last)
	}
	return p.pageURL(resp.NextPage), resp.NextPage, nil
}

// sameList parses a Link target and accepts it only on the client's origin
// and for the list being walked.
func (p *pager) sameList(raw string) (*url.URL, bool) {
	if raw == "" {
		return nil, false
	}
	u, err := url.Parse(raw)
	if err != nil || !p.c.sameOrigin(u) || u.EscapedPath() != p.listPath {
		return nil, false
	}
	return u, true
}

// key identifies a page request by its path and sorted query.
func (p *pager) key(raw string) string {
	u, err := p.c.resolve(raw)
	if err != nil {
		return raw
	}
	return u.EscapedPath() + "?" + u.Query().Encode()
}

func (p *pager) loopError(format string, a ...any) error {
	return fmt.Errorf("%s: %w: "+format, append([]any{requestName(http.MethodGet, p.listPath), ErrPaginationLoop}, a...)...)
}

func hasNext(resp *Response) bool { return resp.NextPage > 0 || resp.NextURL != "" }

// page is the endpoint of one page, by its path and query (or same-origin
// URL); each page is a call of the list's route.
func (p *pager) page(path string) endpoint { return endpoint{s: path, tmpl: p.tmpl} }

// fetchPage gets one page.
func fetchPage[T any](ctx context.Context, c *Client, p endpoint) ([]*T, *Response, error) {
	return doList[T](ctx, c, http.MethodGet, p, nil)
}

// dropNil removes nil records in place.
func dropNil[T any](items []*T) []*T {
	out := items[:0]
	for _, it := range items {
		if it != nil {
			out = append(out, it)
		}
	}
	clear(items[len(out):])
	return out
}

type pageResult[T any] struct {
	page  int
	url   string
	items []*T
	resp  *Response
	err   error
}

// prefetchedErr says why a prefetched page ends the walk, if it does. Once
// the caller's ctx has ended, a page fetched before is not handed out: the
// walk ends as it would without prefetch.
func prefetchedErr[T any](ctx context.Context, p *pager, res pageResult[T]) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if res.err != nil {
		return res.err
	}
	if err := p.confirm(res.url, res.page, res.resp); err != nil {
		return err
	}
	if res.resp.NextPage > 0 && res.resp.NextPage <= res.page {
		return p.loopError("next page %d after page %d", res.resp.NextPage, res.page)
	}
	return nil
}

// prefetchPages yields the items of page cur, already fetched, and those of
// the pages after it up to total, with up to Prefetch requests in flight
// ahead of the last page confirmed. The window opens at full width at once:
// the server's own headers named the total, and a server that lies about it
// costs at most Prefetch requests, since the walk stops at the first empty
// page or at a page that names no next one. When the loop breaks it cancels
// what is in flight and waits for it, so no goroutine outlives the iterator.
func prefetchPages[T any](ctx context.Context, c *Client, p *pager, cur, total int, items []*T, yield func(*T, error) bool) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()

	var pending []chan pageResult[T]
	launched := cur
	launch := func(confirmed int) {
		for launched < total && launched < confirmed+p.prefetch {
			launched++
			ch := make(chan pageResult[T], 1)
			pending = append(pending, ch)
			wg.Add(1)
			go func(page int) {
				defer wg.Done()
				u := p.pageURL(page)
				items, resp, err := fetchPage[T](ctx, c, p.page(u))
				ch <- pageResult[T]{page, u, items, resp, err}
			}(launched)
		}
	}
	for {
		launch(cur)
		for _, it := range items {
			if !yield(it, nil) {
				return
			}
		}
		if cur >= total || len(pending) == 0 {
			return
		}
		res := <-pending[0]
		pending = pending[1:]
		err := prefetchedErr(ctx, p, res)
		if partial(err) {
			yieldPartial(res.items, err, yield)
			return
		}
		if err != nil {
			yield(nil, err)
			return
		}
		if len(res.items) == 0 {
			return
		}
		cur, items = res.page, res.items
		if !hasNext(res.resp) {
			total = min(total, cur) // the server says this page is the last
		}
	}
}
