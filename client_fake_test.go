package collab_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

func TestAuthAgainstFake(t *testing.T) {
	_, srv := newFakeClient(t)
	alice := srv.AddUser("alice", false)
	pat := srv.Seed.Token(alice, collabtest.PersonalAccessToken)
	for name, opt := range map[string]collab.ClientOption{
		"private": collab.WithPrivateToken(srv.AdminToken), "oauth": collab.WithOAuthToken(srv.AdminOAuthToken), "personal": collab.WithPersonalAccessToken(pat),
	} {
		c, err := collab.NewClient(srv.URL, opt, collab.WithoutRetries())
		require.NoError(t, err)
		_, err = rawCall(c, http.MethodGet, "no/such/route")
		assert.ErrorIs(t, err, collab.ErrNotFound, "%s token authenticates", name)
	}
	for _, opt := range []collab.ClientOption{collab.WithPrivateToken("nope"), collab.WithOAuthToken("nope")} {
		c, err := collab.NewClient(srv.URL, opt, collab.WithoutRetries())
		require.NoError(t, err)
		_, err = rawCall(c, http.MethodGet, "projects")
		assert.ErrorIs(t, err, collab.ErrUnauthorized)
		var er *collab.ErrorResponse
		require.ErrorAs(t, err, &er)
		assert.Equal(t, "401 Unauthorized", er.Message)
	}

	admin := clientAs(t, srv, srv.AdminToken)
	_, err := rawCall(admin.Sudo("nobody"), http.MethodGet, "projects")
	assert.ErrorIs(t, err, collab.ErrNotFound)
	assert.ErrorContains(t, err, "No user id or username for: nobody")
	_, err = rawCall(clientAs(t, srv, alice.Token).Sudo("root"), http.MethodGet, "projects")
	assert.ErrorIs(t, err, collab.ErrForbidden)
	assert.ErrorContains(t, err, "Must be admin to use sudo")
}

func TestRetriesAgainstFake(t *testing.T) {
	_, srv := newFakeClient(t)
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken), collab.WithRetry(fastRetry))
	require.NoError(t, err)

	srv.FailNext(3, http.StatusServiceUnavailable)
	_, err = rawCall(c, http.MethodGet, "nowhere")
	assert.ErrorIs(t, err, collab.ErrNotFound, "three 503s retried, the fourth attempt reached the route")

	srv.FailNext(1, http.StatusBadGateway)
	_, err = rawCall(c, http.MethodPost, "nowhere")
	assert.ErrorIs(t, err, collab.ErrServer, "a POST is not retried after a 5xx")
	_, err = rawCall(c, http.MethodPost, "nowhere")
	assert.ErrorIs(t, err, collab.ErrNotFound, "the single fault was used up by the single attempt")

	srv.FailNext(2, http.StatusTooManyRequests)
	_, err = rawCall(c, http.MethodPost, "nowhere")
	assert.ErrorIs(t, err, collab.ErrNotFound, "429 is retried even for POST")

	srv.FailNext(10, http.StatusServiceUnavailable)
	_, err = rawCall(c, http.MethodGet, "nowhere")
	assert.ErrorIs(t, err, collab.ErrServer, "gives up after MaxRetries")
	srv.FailNext(0, 0)
}

// rawCall sends a request with no body to path (under /api/v3) and
// discards the answer.
func rawCall(c *collab.Client, method, path string) (*collab.Response, error) {
	req, err := c.NewRequest(context.Background(), method, path, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req, nil)
}
