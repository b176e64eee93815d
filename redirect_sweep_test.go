package collab_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/suite"
	"github.com/collabsvc/collab/runner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoCallSendsASecretThroughARedirect calls every method of both
// packages against a server that redirects every request (302, 307 and 308
// by turns) to another origin, and checks what reached that origin: never a
// request body, never a credential header, never the secret anywhere.
func TestNoCallSendsASecretThroughARedirect(t *testing.T) {
	const secret = "redirect-secret-6e0f2a"
	var mu sync.Mutex
	var leaks []string
	var reached atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if len(body) > 0 {
			leaks = append(leaks, r.Method+" "+r.URL.Path+": a body")
		}
		for k, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, secret) || strings.EqualFold(k, "PRIVATE-TOKEN") || strings.EqualFold(k, "BUILD-TOKEN") || strings.EqualFold(k, "Authorization") {
					leaks = append(leaks, r.Method+" "+r.URL.Path+": header "+k)
				}
			}
		}
		if strings.Contains(r.URL.String(), secret) {
			leaks = append(leaks, r.Method+" "+r.URL.Path+": the URL")
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(other.Close)
	var n atomic.Int64
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		status := []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect}[n.Add(1)%3]
		http.Redirect(w, r, other.URL+r.URL.Path, status)
	}))
	t.Cleanup(home.Close)

	for _, auth := range []collab.ClientOption{collab.WithPrivateToken(secret), collab.WithOAuthToken(secret)} {
		c, err := collab.NewClient(home.URL, auth, collab.WithRetry(collab.RetryPolicy{MaxRetries: 2}))
		require.NoError(t, err)
		calls := suite.Sweep(context.Background(), c.Sudo("admin"), suite.Args{String: "x-arg"})
		for _, call := range calls {
			if call.Err != nil {
				assert.NotContains(t, call.Err.Error(), "panic", call.Name)
			}
		}
	}
	rc, err := runner.NewClient(home.URL, collab.WithRetry(collab.RetryPolicy{MaxRetries: 2}))
	require.NoError(t, err)
	suite.Sweep(context.Background(), rc, suite.Args{String: secret, Field: "x-field"}, "API")

	assert.Greater(t, n.Load(), int64(200), "the calls reached the redirecting server")
	assert.Positive(t, reached.Load(), "credential-free requests followed the redirect")
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, leaks)
}
