package collab

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func rawIDs(t *testing.T, c *Client, path string, prefetch int) ([]int, error) {
	t.Helper()
	var ids []int
	for raw, err := range c.AllRaw(context.Background(), path, Prefetch(prefetch)) {
		if err != nil {
			return ids, err
		}
		var it item
		require.NoError(t, json.Unmarshal(raw, &it))
		ids = append(ids, it.ID)
	}
	return ids, nil
}

func TestAllRawFollowsEveryPageWithTheQuery(t *testing.T) {
	for _, prefetch := range []int{1, 4} {
		var requests atomic.Int64
		srv := pagedServer(t, 250, "", &requests)
		var states atomic.Int64 // requests that carried the query
		c, err := NewClient(srv.URL, WithoutRetries(), WithHTTPClient(&http.Client{Transport: rawTransport(func(r *http.Request) {
			if r.URL.Query().Get("state") == "opened" {
				states.Add(1)
			}
		})}))
		require.NoError(t, err)
		ids, err := rawIDs(t, c, "items?state=opened&per_page=30", prefetch)
		require.NoError(t, err)
		assert.Equal(t, seqIDs(250), ids, "prefetch %d: every item, in order", prefetch)
		assert.EqualValues(t, 9, requests.Load(), "30 a page: nine requests")
		assert.EqualValues(t, 9, states.Load(), "the query goes with every page")
	}
}

func TestAllRawStartsAtTheGivenPage(t *testing.T) {
	var requests atomic.Int64
	srv := pagedServer(t, 250, "", &requests)
	c, err := NewClient(srv.URL, WithoutRetries())
	require.NoError(t, err)
	ids, err := rawIDs(t, c, "/items?page=3", 1)
	require.NoError(t, err)
	assert.Equal(t, seqIDs(250)[200:], ids, "page 3 of 100 items onwards")
}

func TestAllRawSkipsNullsAndRefusesABadQuery(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"id":1},null,{"id":2}]`))
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, WithoutRetries())
	require.NoError(t, err)
	ids, err := rawIDs(t, c, "items", 1)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, ids)

	_, err = rawIDs(t, c, "items?a=%zz", 1)
	var ae *ArgumentError
	assert.ErrorAs(t, err, &ae)
}

// rawTransport sees each request before sending it.
type rawTransport func(*http.Request)

func (f rawTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f(r)
	return http.DefaultTransport.RoundTrip(r)
}
