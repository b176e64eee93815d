package collab_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connCounter is a server that counts the connections opened to it.
type connCounter struct {
	*httptest.Server
	mu     sync.Mutex
	opened int
}

func newConnCounter(t *testing.T) *connCounter {
	cc := &connCounter{}
	cc.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"id": 1}`))
	}))
	cc.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			cc.mu.Lock()
			cc.opened++
			cc.mu.Unlock()
		}
	}
	cc.Start()
	t.Cleanup(cc.Close)
	return cc
}

func (cc *connCounter) connections() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.opened
}

// get makes one call, which leaves its connection idle.
func get(t *testing.T, c *collab.Client) {
	t.Helper()
	_, _, err := c.Projects.Get(context.Background(), 1)
	require.NoError(t, err)
}

// TestCloseClosesTheTransportItMade: without WithHTTPClient, Close drops
// the idle connection, so the next call opens another; the client stays
// usable.
func TestCloseClosesTheTransportItMade(t *testing.T) {
	srv := newConnCounter(t)
	c, err := collab.NewClient(srv.URL, collab.WithoutRetries())
	require.NoError(t, err)
	get(t, c)
	get(t, c)
	require.Equal(t, 1, srv.connections(), "an idle connection is reused")
	require.NoError(t, c.Close())
	get(t, c)
	assert.Equal(t, 2, srv.connections(), "Close dropped the idle connection")
	assert.NoError(t, c.Sudo("bob").Close(), "a copy closes the same transport")
}

// TestCloseLeavesTheCallersClient: with WithHTTPClient, Close leaves the
// caller's transport and its idle connection alone, for the caller's other
// uses of it.
func TestCloseLeavesTheCallersClient(t *testing.T) {
	srv := newConnCounter(t)
	hc := &http.Client{Transport: collab.NewTransport()}
	c, err := collab.NewClient(srv.URL, collab.WithHTTPClient(hc), collab.WithoutRetries())
	require.NoError(t, err)
	get(t, c)
	require.NoError(t, c.Close())
	get(t, c)
	resp, err := hc.Get(srv.URL)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 1, srv.connections(), "the caller's idle connection survived Close")

	hc.CloseIdleConnections()
	get(t, c)
	assert.Equal(t, 2, srv.connections(), "the caller closes its own")
}
