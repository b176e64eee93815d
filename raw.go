package collab

import (
	"context"
	"encoding/json"
	"iter"
	"net/url"
	"strings"
)

// AllRaw iterates over every item of the list at path, as raw JSON, for
// endpoints or fields the typed services do not cover. path is relative to
// the API root and already escaped, and may carry a query string
// ("projects/1/issues?state=opened"); its page and per_page set where the
// walk starts and the page size (100 when absent).
//
// It walks the pages exactly as the All iterators do, and takes the same
// options (Prefetch): it never fetches a page twice, stops when the loop
// breaks and yields an error last. Only the pages in flight are held in
// memory.
//
// API: GET /:path (any paginated list)
func (c *Client) AllRaw(ctx context.Context, path string, opts ...IterOption) iter.Seq2[json.RawMessage, error] {
	path, rawQuery, _ := strings.Cut(path, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return func(yield func(json.RawMessage, error) bool) {
			yield(nil, invalidArg("path", "bad query: %v", err))
		}
	}
	items := all[json.RawMessage](ctx, c, endpoint{s: path}, &rawListOptions{Query: queryParams(q)}, opts)
	return func(yield func(json.RawMessage, error) bool) {
		for it, err := range items {
			var m json.RawMessage
			if it != nil {
				m = *it
			}
			if !yield(m, err) {
				return
			}
		}
	}
}

// rawListOptions carries a caller's query through the pager.
type rawListOptions struct {
	Query queryParams `url:"q"`
}

// queryParams encodes its parameters under their own names.
type queryParams url.Values

// EncodeValues implements query.Encoder.
func (q queryParams) EncodeValues(_ string, v *url.Values) error {
	for k, vs := range q {
		(*v)[k] = vs
	}
	return nil
}
