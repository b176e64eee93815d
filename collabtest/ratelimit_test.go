package collabtest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/collabtest"
)

// TestRateLimitPerToken: past its budget a token gets 429 with Retry-After,
// another token is not affected, and the request log says what came when.
func TestRateLimitPerToken(t *testing.T) {
	srv := collabtest.NewTestServer(t, collabtest.WithRateLimit(0.5, 2))
	other := srv.AddUser("other", false).Token
	c := controlClient{t: t, base: srv.URL, root: srv.AdminToken}
	var got []int
	for range 3 {
		got = append(got, c.do(http.MethodGet, "/api/v3/projects", srv.AdminToken, "", nil))
	}
	assert.Equal(t, []int{200, 200, 429}, got)
	assert.Equal(t, 200, c.do(http.MethodGet, "/api/v3/projects", other, "", nil), "each token has its own budget")

	log := srv.Requests()
	require.Len(t, log, 4)
	assert.Equal(t, http.StatusTooManyRequests, log[2].Status)
	assert.Equal(t, "/api/v3/projects", log[2].Path)
	assert.Equal(t, log[0].Token, log[2].Token)
	assert.NotEqual(t, log[0].Token, log[3].Token)
	assert.Len(t, log[0].Token, 12)
	assert.False(t, strings.Contains(srv.AdminToken, log[0].Token), "the log holds a hash, never the token")
	for i := 1; i < len(log); i++ {
		assert.False(t, log[i].Time.Before(log[i-1].Time), "in order of arrival")
	}

	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v3/projects", nil)
	req.Header.Set("PRIVATE-TOKEN", srv.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "2", resp.Header.Get("Retry-After"), "whole seconds until the next request is allowed")

	srv.SetRateLimit(0, 0)
	assert.Equal(t, 200, c.do(http.MethodGet, "/api/v3/projects", srv.AdminToken, "", nil), "rate 0 lifts the limit")
	srv.ClearRequests()
	assert.Empty(t, srv.Requests())
}

func TestRateLimitControlAPI(t *testing.T) {
	srv := collabtest.NewTestServer(t)
	c := controlClient{t: t, base: srv.URL, root: srv.AdminToken}
	var set map[string]any
	require.Equal(t, 200, c.control(http.MethodPut, "ratelimit", `{"rate": 1}`, &set))
	assert.Equal(t, map[string]any{"rate": 1.0, "burst": 1.0}, set)
	assert.Equal(t, 400, c.control(http.MethodPut, "ratelimit", `{"rate": -1}`, nil))
	assert.Equal(t, 200, c.do(http.MethodGet, "/api/v3/projects", srv.AdminToken, "", nil))
	assert.Equal(t, 429, c.do(http.MethodGet, "/api/v3/projects", srv.AdminToken, "", nil))
	assert.Equal(t, 200, c.control(http.MethodGet, "deliveries", "", nil), "the control API is never limited")

	var log []struct {
		Method string `json:"method"`
		Path   string `json:"path"`
		Status int    `json:"status"`
		Token  string `json:"token_sha256_prefix"`
		Time   string `json:"time"`
	}
	require.Equal(t, 200, c.control(http.MethodGet, "requests", "", &log))
	require.Len(t, log, 2, "control requests are not logged")
	assert.Equal(t, []int{200, 429}, []int{log[0].Status, log[1].Status})
	assert.NotEmpty(t, log[0].Time)
	require.Equal(t, 200, c.control(http.MethodDelete, "requests", "", nil))
	require.Equal(t, 200, c.control(http.MethodGet, "requests", "", &log))
	assert.Empty(t, log)
	require.Equal(t, 200, c.control(http.MethodPut, "ratelimit", `{"rate": 0}`, nil))
	assert.Equal(t, 200, c.do(http.MethodGet, "/api/v3/projects", srv.AdminToken, "", nil))
}
