package mcptools

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
)

// A list's operation hands out its items through an iterator, which keeps
// the responses to itself; the total the server reports is read from the
// responses on their way instead, by a transport that knows the call from
// the request's context.

type pageInfoKey struct{}

// pageInfo is what the last response of one call said of its list.
type pageInfo struct{ totalItems atomic.Int64 }

func (p *pageInfo) total() int { return int(p.totalItems.Load()) }

func withPageInfo(ctx context.Context) (context.Context, *pageInfo) {
	p := new(pageInfo)
	return context.WithValue(ctx, pageInfoKey{}, p), p
}

// HTTPClient is an http.Client for the server's collab client: it sends
// with base (http.DefaultTransport when nil) and reads each list's total.
func HTTPClient(base http.RoundTripper) *http.Client {
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: totalReader{base}}
}

type totalReader struct{ base http.RoundTripper }

func (t totalReader) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if p, ok := req.Context().Value(pageInfoKey{}).(*pageInfo); ok && err == nil {
		if n, e := strconv.Atoi(resp.Header.Get("X-Total")); e == nil {
			p.totalItems.Store(int64(n))
		}
	}
	return resp, err
}
