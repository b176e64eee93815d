package collabtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newTestServer starts a server and closes it after the test, asserting no
// handler panicked.
func newTestServer(t *testing.T) *Server {
	t.Helper()
	s := NewServer()
	t.Cleanup(func() {
		assert.Zero(t, s.Panics(), "recovered panics")
		s.Close()
	})
	return s
}

// do sends a raw request and returns status, headers and body.
func do(t *testing.T, s *Server, method, path string, header http.Header, body io.Reader) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, body)
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := s.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

func TestAuthenticationByEveryTokenKind(t *testing.T) {
	s := newTestServer(t)
	pat := s.AddToken(s.AdminID, PersonalAccessToken)
	ok := []struct {
		path   string
		header http.Header
	}{
		{"/api/v3/nowhere", http.Header{"Private-Token": {s.AdminToken}}},
		{"/api/v3/nowhere?private_token=" + s.AdminToken, nil},
		{"/api/v3/nowhere", http.Header{"Authorization": {"Bearer " + s.AdminOAuthToken}}},
		{"/api/v3/nowhere?access_token=" + s.AdminOAuthToken, nil},
		{"/api/v3/nowhere", http.Header{"Private-Token": {pat}}},
	}
	for _, tt := range ok {
		status, _, body := do(t, s, "GET", tt.path, tt.header, nil)
		assert.Equal(t, http.StatusNotFound, status, "authenticated, then no such route: %s", tt.path)
		assert.JSONEq(t, `{"message":"404 Not Found"}`, body)
	}
	bad := []http.Header{nil, {"Private-Token": {"nope"}}, {"Authorization": {"Bearer nope"}}, {"Authorization": {s.AdminToken}}}
	for _, h := range bad {
		status, hdr, body := do(t, s, "GET", "/api/v3/nowhere", h, nil)
		assert.Equal(t, http.StatusUnauthorized, status)
		assert.Equal(t, "application/json", hdr.Get("Content-Type"))
		assert.JSONEq(t, `{"message":"401 Unauthorized"}`, body)
	}
}

func TestSudoRules(t *testing.T) {
	s := newTestServer(t)
	alice := s.AddUser("alice", false)
	bob := s.AddUser("bob", false)
	h := func(tok, sudo string) http.Header { return http.Header{"Private-Token": {tok}, "Sudo": {sudo}} }

	status, _, body := do(t, s, "GET", "/api/v3/nowhere", h(alice.Token, "bob"), nil)
	assert.Equal(t, http.StatusForbidden, status)
	assert.JSONEq(t, `{"message":"403 Forbidden: Must be admin to use sudo"}`, body)

	status, _, body = do(t, s, "GET", "/api/v3/nowhere", h(s.AdminToken, "nobody"), nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"message":"404 No user id or username for: nobody Not Found"}`, body)

	status, _, body = do(t, s, "GET", "/api/v3/nowhere", h(s.AdminToken, "999999"), nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"message":"404 No user id or username for: 999999 Not Found"}`, body)

	for _, who := range []string{"bob", "3"} {
		status, _, _ = do(t, s, "GET", "/api/v3/nowhere", h(s.AdminToken, who), nil)
		assert.Equal(t, http.StatusNotFound, status, "sudo accepted, then no such route")
	}
	status, _, _ = do(t, s, "GET", "/api/v3/nowhere?sudo="+url.QueryEscape("bob"), http.Header{"Private-Token": {alice.Token}}, nil)
	assert.Equal(t, http.StatusForbidden, status, "sudo in the query is read too")
	assert.NotNil(t, s.findUser(bob.Username))
	assert.Equal(t, bob.ID, s.findUser(strconv.Itoa(bob.ID)).id)
	assert.Nil(t, s.findUser(""))
}

func TestRouterMatchesEscapedSegmentsAndFormatSuffix(t *testing.T) {
	s := &Server{}
	s.db.init()
	var got []string
	h := func(name string) func(*call) { return func(c *call) { got = append(got, name+":"+c.params["id"]) } }
	s.handle("GET", "/projects/owned", h("owned"))
	s.handle("GET", "/projects/:id", h("get"))
	s.handle("GET", "/projects/:id/star", h("star"))
	s.handleRunner("PATCH", "/builds/:id/trace.txt", false, h("trace"))

	tests := []struct {
		method, path, want string
		ok                 bool
	}{
		{"GET", "/api/v3/projects/owned", "owned:", true},
		{"GET", "/api/v3/projects/7", "get:7", true},
		{"GET", "/api/v3/projects/g%2Fp", "get:g/p", true},
		{"GET", "/api/v3/projects/g%2Fmy%2Esite", "get:g/my.site", true},
		{"GET", "/api/v3/projects/g%2Fmy.site", "get:g/my", true}, // an unescaped dot starts a format suffix
		{"GET", "/api/v3/projects/7.json", "get:7", true},
		{"GET", "/api/v3/projects/7/star", "star:7", true},
		{"PATCH", "/ci/api/v1/builds/3/trace.txt", "trace:3", true},
		{"GET", "/api/v3/projects/%zz", "", false},
		{"GET", "/api/v3/projects/7/nothing", "", false},
	}
	for _, tt := range tests {
		rt, params, _ := s.match(tt.method, tt.path)
		if !tt.ok {
			assert.Nil(t, rt, tt.path)
			continue
		}
		require.NotNil(t, rt, tt.path)
		got = nil
		rt.h(&call{params: params})
		assert.Equal(t, []string{tt.want}, got, tt.path)
	}
	_, _, allowed := s.match("DELETE", "/api/v3/projects/7/star")
	assert.True(t, allowed, "path known, method not")
}

func TestMethodNotAllowedAndUnknownRoutes(t *testing.T) {
	s := newTestServer(t)
	status, _, body := do(t, s, "GET", "/elsewhere", nil, nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"message":"404 Not Found"}`, body)
}

func TestFailNext(t *testing.T) {
	s := newTestServer(t)
	s.FailNext(2, http.StatusServiceUnavailable)
	for i := 0; i < 2; i++ {
		status, h, body := do(t, s, "GET", "/api/v3/nowhere", nil, nil)
		assert.Equal(t, http.StatusServiceUnavailable, status)
		assert.Equal(t, "0", h.Get("Retry-After"))
		assert.JSONEq(t, `{"message":"503 Service Unavailable"}`, body)
	}
	status, _, _ := do(t, s, "GET", "/api/v3/nowhere", nil, nil)
	assert.Equal(t, http.StatusUnauthorized, status, "faults used up")
}

func TestPanicsBecome500(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.routes = append([]*routeEntry{{method: "GET", segs: splitPath("/api/v3/boom"), h: func(*call) { panic("boom") }}}, s.routes...)
	status, _, body := do(t, s, "GET", "/api/v3/boom", http.Header{"Private-Token": {s.AdminToken}}, nil)
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.JSONEq(t, `{"message":"500 Internal Server Error"}`, body)
	assert.Equal(t, 1, s.Panics())
	// The lock was released: the server still answers.
	status, _, _ = do(t, s, "GET", "/api/v3/nowhere", http.Header{"Private-Token": {s.AdminToken}}, nil)
	assert.Equal(t, http.StatusNotFound, status)
}

// testCall builds a call on a recorder for the writers' unit tests.
func testCall(target string) (*call, *httptest.ResponseRecorder) {
	r := httptest.NewRequest("GET", target, nil)
	w := httptest.NewRecorder()
	c := &call{w: w, r: r}
	c.parseForm()
	return c, w
}

func TestPaginationWriter(t *testing.T) {
	items := make([]int, 45)
	for i := range items {
		items[i] = i + 1
	}
	render := func(i int) any { return i }
	tests := []struct {
		query                               string
		total, pages, per, page, next, prev string
		first, count                        int
		link                                []string
	}{
		{"", "45", "3", "20", "1", "2", "", 1, 20, []string{"next", "first", "last"}},
		{"?page=2", "45", "3", "20", "2", "3", "1", 21, 20, []string{"prev", "next", "first", "last"}},
		{"?page=3", "45", "3", "20", "3", "", "2", 41, 5, []string{"prev", "first", "last"}},
		{"?per_page=500", "45", "1", "100", "1", "", "", 1, 45, []string{"first", "last"}},
		{"?per_page=0&page=-4", "45", "3", "20", "1", "2", "", 1, 20, []string{"next", "first", "last"}},
		{"?per_page=abc&page=xyz", "45", "3", "20", "1", "2", "", 1, 20, []string{"next", "first", "last"}},
		{"?page=9", "45", "3", "20", "9", "", "8", 0, 0, []string{"prev", "first", "last"}},
	}
	for _, tt := range tests {
		c, w := testCall("http://fake.example/api/v3/projects" + tt.query)
		page(c, items, render)
		h := w.Header()
		assert.Equal(t, tt.total, h.Get("X-Total"), tt.query)
		assert.Equal(t, tt.pages, h.Get("X-Total-Pages"), tt.query)
		assert.Equal(t, tt.per, h.Get("X-Per-Page"), tt.query)
		assert.Equal(t, tt.page, h.Get("X-Page"), tt.query)
		assert.Equal(t, tt.next, h.Get("X-Next-Page"), tt.query)
		assert.Equal(t, tt.prev, h.Get("X-Prev-Page"), tt.query)
		for _, k := range []string{"X-Next-Page", "X-Prev-Page"} {
			_, present := h[k]
			assert.True(t, present, "%s is sent even when empty", k)
		}
		var rels []string
		for _, part := range strings.Split(h.Get("Link"), ", ") {
			i := strings.Index(part, `rel="`)
			require.Positive(t, i, part)
			rels = append(rels, strings.TrimSuffix(part[i+5:], `"`))
			assert.True(t, strings.HasPrefix(part, "<http://fake.example/api/v3/projects?"), part)
		}
		assert.Equal(t, tt.link, rels, tt.query)
		var got []int
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
		assert.Len(t, got, tt.count, tt.query)
		if tt.count > 0 {
			assert.Equal(t, tt.first, got[0], tt.query)
		}
	}
	// No results: zero pages and a last link with page=0.
	c, w := testCall("http://fake.example/api/v3/projects?private_token=t&b=2&a=1")
	page(c, []int{}, render)
	assert.Equal(t, "0", w.Header().Get("X-Total-Pages"))
	assert.Equal(t, `<http://fake.example/api/v3/projects?a=1&b=2&page=1&private_token=t>; rel="first", <http://fake.example/api/v3/projects?a=1&b=2&page=0&private_token=t>; rel="last"`, w.Header().Get("Link"),
		"every parameter repeated, sorted, the token included")
	assert.Equal(t, "[]", w.Body.String())
}

func TestErrorWriters(t *testing.T) {
	tests := []struct {
		write  func(c *call)
		status int
		body   string
	}{
		{func(c *call) { c.notFound("Project") }, 404, `{"message":"404 Project Not Found"}`},
		{func(c *call) { c.notFound("") }, 404, `{"message":"404 Not found"}`},
		{func(c *call) { c.missing("title") }, 400, `{"message":"400 (Bad request) \"title\" not given"}`},
		{func(c *call) {
			c.invalid(map[string]any{"title": []string{"is invalid"}, "namespace": map[string]any{"name": []string{"too long"}}})
		},
			400, `{"message":{"title":["is invalid"],"namespace":{"name":["too long"]}}}`},
		{func(c *call) { c.failError(416, "416 Range Not Satisfiable") }, 416, `{"error":"416 Range Not Satisfiable"}`},
		{func(c *call) { c.failList(422, "Name has already been taken") }, 422, `["Name has already been taken"]`},
		{func(c *call) { c.forbidden() }, 403, `{"message":"403 Forbidden"}`},
		{func(c *call) { c.unauthorized() }, 401, `{"message":"401 Unauthorized"}`},
		{func(c *call) { c.conflict("409 Conflict") }, 409, `{"message":"409 Conflict"}`},
		{func(c *call) { c.badRequest("400 (Bad request) x") }, 400, `{"message":"400 (Bad request) x"}`},
		{func(c *call) { c.json(200, func() {}) }, 500, `{"message":"500 Internal Server Error"}`},
	}
	for _, tt := range tests {
		c, w := testCall("http://fake.example/x")
		tt.write(c)
		assert.Equal(t, tt.status, w.Code)
		assert.JSONEq(t, tt.body, w.Body.String())
	}
	c, w := testCall("http://fake.example/x")
	c.notModified()
	assert.Equal(t, 304, w.Code)
	assert.Empty(t, w.Body.String())
}

func TestParameterReaders(t *testing.T) {
	c, w := testCall("http://fake.example/x?n=12&bad=1x&t=TRUE&f=nope&on=on&labels=a,+b,,c&labels=d&ts=2016-01-04T15:31:46Z&date=2016-01-04&badtime=soon&empty=")
	n, present, ok := c.intParam("n")
	assert.Equal(t, []any{12, true, true}, []any{n, present, ok})
	_, present, ok = c.intParam("absent")
	assert.True(t, ok)
	assert.False(t, present)
	_, _, ok = c.intParam("empty")
	assert.True(t, ok)
	v, present := c.boolParam("t")
	assert.True(t, v && present)
	v, present = c.boolParam("f")
	assert.True(t, !v && present)
	v, _ = c.boolParam("on")
	assert.True(t, v)
	_, present = c.boolParam("none")
	assert.False(t, present)
	assert.Equal(t, []string{"a", "b", "c", "d"}, c.listParam("labels"))
	tm, present, ok := c.timeParam("ts")
	assert.True(t, present && ok)
	assert.Equal(t, 2016, tm.Year())
	_, present, ok = c.timeParam("date")
	assert.True(t, present && ok)
	_, present, ok = c.timeParam("none")
	assert.True(t, !present && ok)
	dst := false
	c.setBool("t", &dst)
	assert.True(t, dst)
	str := "keep"
	c.setStr("none", &str)
	assert.Equal(t, "keep", str)
	c.setStr("n", &str)
	assert.Equal(t, "12", str)
	assert.Equal(t, "", c.str("none"))
	c.params = map[string]string{"id": "x"}
	_, ok = c.pathInt("id")
	assert.False(t, ok)
	assert.Equal(t, 404, w.Code)

	c, w = testCall("http://fake.example/x?bad=1x")
	_, _, ok = c.intParam("bad")
	assert.False(t, ok)
	assert.Equal(t, 400, w.Code)
	assert.JSONEq(t, `{"message":{"bad":["is invalid"]}}`, w.Body.String())

	c, w = testCall("http://fake.example/x?badtime=soon")
	_, _, ok = c.timeParam("badtime")
	assert.False(t, ok)
	assert.Equal(t, 400, w.Code)
}

func TestFormBodyIsMergedWithQuery(t *testing.T) {
	r := httptest.NewRequest("POST", "http://fake.example/x?a=1", strings.NewReader("b=2&a=3"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	c := &call{w: w, r: r}
	require.True(t, c.parseForm())
	assert.Equal(t, "2", c.str("b"))
	assert.Equal(t, "3", c.str("a"), "the body wins")

	r = httptest.NewRequest("POST", "http://fake.example/x", strings.NewReader("%zz=%"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w = httptest.NewRecorder()
	c = &call{w: w, r: r}
	assert.False(t, c.parseForm())
	assert.Equal(t, 400, w.Code)
}

func TestSeedingHelpers(t *testing.T) {
	s := newTestServer(t)
	u := s.AddUser("carol", false)
	pid := s.AddProject(u.ID, "My Site", 0)
	require.NotZero(t, pid)
	assert.NotEmpty(t, s.ProjectRunnersToken(pid))
	assert.Empty(t, s.ProjectRunnersToken(999999))
	sha := s.AddBranch(pid, "feature/x", "")
	assert.Len(t, sha, 40)
	assert.Equal(t, "abc", s.AddBranch(pid, "feature/x", "abc"))
	assert.Empty(t, s.AddBranch(999999, "x", ""))
	s.mu.Lock()
	p := s.projects[pid]
	assert.Equal(t, "my-site", p.path)
	assert.Equal(t, sha, p.branches["feature/x"].parentID)
	assert.Same(t, p, s.lookupProject("carol/my-site"))
	assert.Same(t, p, s.lookupProject("CAROL/My-Site"))
	assert.Nil(t, s.lookupProject("carol/none"))
	assert.Equal(t, 50, s.accessLevel(s.users[u.ID], p))
	admin := s.users[s.AdminID]
	assert.True(t, s.canSee(admin, p))
	s.mu.Unlock()

	dave := s.AddUser("dave", false)
	s.mu.Lock()
	assert.False(t, s.canSee(s.users[dave.ID], p), "private project, not a member")
	s.mu.Unlock()
	s.AddMember(pid, dave.ID, 30)
	s.mu.Lock()
	assert.True(t, s.canSee(s.users[dave.ID], p))
	assert.False(t, s.isOwner(s.users[dave.ID], p))
	assert.True(t, s.isOwner(admin, p))
	s.mu.Unlock()
}
