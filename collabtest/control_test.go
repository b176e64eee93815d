package collabtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/collabtest"
)

// controlClient drives a fake over HTTP only, as a script in another
// language would: it knows the base URL and the administrator's token.
type controlClient struct {
	t          *testing.T
	base, root string
}

// do sends a JSON body (when not "") with token and decodes the JSON answer
// into out (when not nil).
func (c controlClient) do(method, path, token, body string, out any) int {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	require.NoError(c.t, err)
	if token != "" {
		req.Header.Set("PRIVATE-TOKEN", token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	if out != nil {
		require.NoError(c.t, json.Unmarshal(b, out), "%s %s: %s", method, path, b)
	}
	return resp.StatusCode
}

func (c controlClient) control(method, path, body string, out any) int {
	c.t.Helper()
	return c.do(method, "/-/collabtest/"+path, c.root, body, out)
}

type delivery struct {
	HookID    int               `json:"hook_id"`
	Event     string            `json:"event"`
	Headers   map[string]string `json:"headers"`
	Body      map[string]any    `json:"body"`
	Attempt   int               `json:"attempt"`
	Status    int               `json:"status"`
	Duplicate bool              `json:"duplicate"`
}

func TestControlAPIOverHTTP(t *testing.T) {
	srv := collabtest.NewTestServer(t)
	c := controlClient{t: t, base: srv.URL, root: srv.AdminToken}
	received := make(chan http.Header, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received <- r.Header.Clone()
	}))
	defer receiver.Close()

	// Seed a small world and read it back through the service's API.
	var seeded struct {
		Users map[string]struct {
			ID    int
			Token string
		}
		Groups        map[string]int
		Projects      map[string]int
		Issues, Notes []int
		Builds        []int
		Runners       []struct {
			ID    int
			Token string
		}
	}
	require.Equal(t, http.StatusCreated, c.control("POST", "seed", `{
		"users": [{"username": "alice"}, {"username": "bob"}],
		"groups": [{"name": "Acme", "path": "acme", "owner": "alice", "visibility": "internal", "members": {"bob": "reporter"}}],
		"projects": [{"name": "Webshop", "owner": "alice", "group": "acme", "visibility": "internal", "branches": ["feature/login"]}],
		"issues": [{"project": "acme/webshop", "author": "bob", "title": "Checkout fails", "labels": ["bug"],
			"notes": [{"author": "alice", "body": "I can reproduce this."}]}],
		"merge_requests": [{"project": "acme/webshop", "author": "alice", "source_branch": "feature/login",
			"target_branch": "master", "title": "Add a login page"}],
		"builds": [{"project": "acme/webshop", "ref": "master", "status": "success", "trace": "ok\n"}],
		"runners": [{"description": "shared"}]
	}`, &seeded))
	require.Contains(t, seeded.Users, "alice")
	pid := seeded.Projects["acme/webshop"]
	require.NotZero(t, pid)
	assert.NotZero(t, seeded.Groups["acme"])
	assert.Len(t, seeded.Issues, 1)
	assert.Len(t, seeded.Notes, 1)
	assert.Len(t, seeded.Builds, 1)
	require.Len(t, seeded.Runners, 1)
	assert.NotEmpty(t, seeded.Runners[0].Token)
	var issues []map[string]any
	require.Equal(t, http.StatusOK, c.do("GET", "/api/v3/projects/acme%2Fwebshop/issues", seeded.Users["bob"].Token, "", &issues))
	require.Len(t, issues, 1)
	assert.Equal(t, "Checkout fails", issues[0]["title"])
	assert.Equal(t, []any{"bug"}, issues[0]["labels"])

	// A hook with a secret token, and a duplicated delivery.
	var hook struct{ ID int }
	require.Equal(t, http.StatusCreated, c.do("POST", "/api/v3/projects/"+strconv.Itoa(pid)+"/hooks", c.root,
		`{"url":"`+receiver.URL+`","issues_events":true}`, &hook))
	var set map[string]any
	require.Equal(t, http.StatusOK, c.control("PUT", "hooks/"+strconv.Itoa(hook.ID)+"/token", `{"token":"s3cret"}`, &set))
	assert.Equal(t, map[string]any{"hook_id": float64(hook.ID), "token_set": true}, set)
	require.Equal(t, http.StatusCreated, c.control("POST", "faults/delivery", `{"duplicate":true}`, nil))
	require.Equal(t, http.StatusCreated, c.do("POST", "/api/v3/projects/"+strconv.Itoa(pid)+"/issues", c.root, `{"title":"Hooked"}`, nil))
	var ds []delivery
	require.Equal(t, http.StatusOK, c.control("POST", "deliveries/wait", `{"count":2,"idle":true,"timeout":"10s"}`, &ds))
	require.Len(t, ds, 2)
	for i, d := range ds {
		assert.Equal(t, hook.ID, d.HookID)
		assert.Equal(t, "Issue Hook", d.Event)
		assert.Equal(t, "s3cret", d.Headers["X-Gitlab-Token"])
		assert.Equal(t, "Hooked", d.Body["object_attributes"].(map[string]any)["title"])
		assert.Equal(t, 200, d.Status)
		assert.Equal(t, i == 1, d.Duplicate, "the second is the injected duplicate")
		assert.Equal(t, "s3cret", (<-received).Get("X-Gitlab-Token"), "the receiver saw the token")
	}
	var listed []delivery
	require.Equal(t, http.StatusOK, c.control("GET", "deliveries", "", &listed))
	assert.Equal(t, ds, listed)

	// Request faults hit the service's API, never the control API.
	var fault map[string]any
	require.Equal(t, http.StatusCreated, c.control("POST", "faults/request", `{"count":1,"status":503}`, &fault))
	assert.Equal(t, map[string]any{"count": float64(1), "status": float64(503)}, fault)
	require.Equal(t, http.StatusOK, c.control("GET", "deliveries", "", nil), "the control API is not faulted")
	assert.Equal(t, http.StatusServiceUnavailable, c.do("GET", "/api/v3/projects", c.root, "", nil))
	assert.Equal(t, http.StatusOK, c.do("GET", "/api/v3/projects", c.root, "", nil))

	// A delayed delivery: waiting for idle times out with 504.
	require.Equal(t, http.StatusCreated, c.control("POST", "faults/delivery", `{"delay":"1h"}`, nil))
	require.Equal(t, http.StatusCreated, c.do("POST", "/api/v3/projects/"+strconv.Itoa(pid)+"/issues", c.root, `{"title":"Later"}`, nil))
	var timedOut map[string]any
	assert.Equal(t, http.StatusGatewayTimeout, c.control("POST", "deliveries/wait", `{"idle":true,"timeout":"20ms"}`, &timedOut))
	assert.Contains(t, timedOut["message"], "deliveries did not settle")

	// Reset: only the administrator is left, with the same token.
	require.Equal(t, http.StatusOK, c.control("POST", "reset", "", nil))
	var projects []any
	require.Equal(t, http.StatusOK, c.do("GET", "/api/v3/projects/all", c.root, "", &projects))
	assert.Empty(t, projects)
	assert.Equal(t, http.StatusUnauthorized, c.do("GET", "/api/v3/projects", seeded.Users["alice"].Token, "", nil))
	require.Equal(t, http.StatusOK, c.control("GET", "deliveries", "", &listed))
	assert.Empty(t, listed)
	var again struct{ Users map[string]struct{ ID int } }
	require.Equal(t, http.StatusCreated, c.control("POST", "seed", `{"users":[{"username":"alice"}]}`, &again))
	assert.Equal(t, seeded.Users["alice"].ID, again.Users["alice"].ID, "ids start again where a new server's do")
}

func TestControlAPIErrors(t *testing.T) {
	s, err := collabtest.NewServer() // a plain server: a bad seed is the script's mistake, not the test's
	require.NoError(t, err)
	defer s.Close()
	c := controlClient{t: t, base: s.URL, root: s.AdminToken}
	var user struct {
		Users map[string]struct{ Token string }
	}
	require.Equal(t, http.StatusCreated, c.control("POST", "seed", `{"users":[{"username":"eve"}]}`, &user))
	for _, tc := range []struct {
		method, path, token, body string
		status                    int
		message                   string
	}{
		{"GET", "deliveries", "", "", 401, "401 Unauthorized"},
		{"GET", "deliveries", "wrong", "", 401, "401 Unauthorized"},
		{"GET", "deliveries", user.Users["eve"].Token, "", 403, "403 Forbidden"},
		{"GET", "nowhere", c.root, "", 404, "404 Not Found"},
		{"DELETE", "reset", c.root, "", 405, "405 Method Not Allowed"},
		{"POST", "seed", c.root, `{"users":`, 400, "invalid JSON body"},
		{"POST", "seed", c.root, `{"user":[]}`, 400, `unknown field "user"`},
		{"POST", "seed", c.root, `{"projects":[{"name":"x","owner":"nobody"}]}`, 400, `seed: no user "nobody"; made before it: 0 users`},
		{"POST", "seed", c.root, `{"users":[{"username":"eve"}]}`, 400, `AddUser: username "eve" is empty, all digits or taken`},
		{"POST", "seed", c.root, `{"users":[{"username":"ann"}],"groups":[{"name":"G","path":"g","owner":"ann","visibility":"secret"}]}`,
			400, `visibility "secret" is not private, internal or public; made before it: 1 users`},
		{"PUT", "hooks/999/token", c.root, `{"token":"x"}`, 404, "404 Hook Not Found"},
		{"PUT", "hooks/abc/token", c.root, `{"token":"x"}`, 404, "404 Hook Not Found"},
		{"POST", "faults/request", c.root, `{"count":1,"status":42}`, 400, "status an HTTP status"},
		{"POST", "faults/delivery", c.root, `{"delay":5}`, 400, `a duration is a string such as "1.5s"`},
		{"POST", "deliveries/wait", c.root, `{}`, 400, `give "count" (at least 1) or "idle": true`},
	} {
		req, err := http.NewRequest(tc.method, s.URL+"/-/collabtest/"+tc.path, strings.NewReader(tc.body))
		require.NoError(t, err)
		if tc.token != "" {
			req.Header.Set("PRIVATE-TOKEN", tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var answer struct{ Message string }
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, json.Unmarshal(b, &answer), "%s %s: %s", tc.method, tc.path, b)
		assert.Equal(t, tc.status, resp.StatusCode, "%s %s: %s", tc.method, tc.path, b)
		assert.Contains(t, answer.Message, tc.message, "%s %s", tc.method, tc.path)
		assert.NotContains(t, string(b), c.root, "no token in an error")
	}
}
