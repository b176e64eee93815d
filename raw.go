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
// It walks the pages exactly as the All iterators do: it never fetches a page
// twice, stops when the loop breaks and yields an error last. With prefetch
// above one it fetches up to that many later pages concurrently once the
// server reports its page count, and still yields items in order. Only one
// page of items is held at a time.
//
// API: GET /:path (any paginated list)
func (c *Client) AllRaw(ctx context.Context, path string, prefetch int) iter.Seq2[json.RawMessage, error] {
	path, rawQuery, _ := strings.Cut(path, "?")
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return func(yield func(json.RawMessage, error) bool) {
			yield(nil, invalidArg("path", "bad query: %v", err))
		}
	}
	opt := &rawListOptions{ListOptions: ListOptions{Prefetch: prefetch}, Query: queryParams(q)}
	items := all[json.RawMessage](ctx, c, apiPath{s: path}, opt)
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

// rawListOptions carries a caller's query through the pager, which reads
// the prefetch width from the embedded ListOptions.
type rawListOptions struct {
	ListOptions
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
