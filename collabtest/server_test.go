package collabtest

import (
	"encoding/json"
	"errors"
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
// mustServer starts a server the test closes itself.
func mustServer(t testing.TB) *Server {
	t.Helper()
	s, err := NewServer()
	require.NoError(t, err)
	return s
}

func newTestServer(t *testing.T) *Server {
	t.Helper()
	s := mustServer(t)
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
	s := newTestServer(t)
	var got []string
	record := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got = append(got, name+":"+r.PathValue("id"))
		})
	}
	require.NoError(t, s.Handle("GET /api/v3/projects/owned", record("owned")))
	require.NoError(t, s.Handle("GET /api/v3/projects/{id}", record("get")))
	require.NoError(t, s.Handle("GET /api/v3/projects/{id}/star", record("star")))
	require.NoError(t, s.Handle("PATCH /ci/api/v1/builds/{id}/trace.txt", record("trace")))

	tests := []struct{ method, path, want string }{
		{"GET", "/api/v3/projects/owned", "owned:"},
		{"GET", "/api/v3/projects/7", "get:7"},
		{"GET", "/api/v3/projects/g%2Fp", "get:g/p"},
		{"GET", "/api/v3/projects/g%2Fmy%2Esite", "get:g/my.site"},
		{"GET", "/api/v3/projects/g%2Fmy.site", "get:g/my"}, // an unescaped dot starts a format suffix
		{"GET", "/api/v3/projects/7.json", "get:7"},
		{"HEAD", "/api/v3/projects/7.json", "get:7"},
		{"GET", "/api/v3/projects/7/star", "star:7"},
		{"PATCH", "/ci/api/v1/builds/3/trace.txt", "trace:3"},
	}
	for _, tt := range tests {
		got = nil
		status, _, _ := do(t, s, tt.method, tt.path, nil, nil)
		assert.Equal(t, http.StatusOK, status, tt.path)
		assert.Equal(t, []string{tt.want}, got, tt.path)
	}
	auth := http.Header{"Private-Token": {s.AdminToken}}
	status, _, body := do(t, s, "DELETE", "/api/v3/projects/7/nothing", auth, nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"message":"404 Not Found"}`, body)
	status, _, body = do(t, s, "PATCH", "/api/v3/projects/7/star", auth, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status, "path known, method not")
	assert.JSONEq(t, `{"message":"405 Method Not Allowed"}`, body)

	assert.Error(t, s.Handle("GET /api/v3/{bad", record("x")))
	assert.Error(t, s.Handle("GET /x", nil))
}

func TestHandleReplacesOneRoute(t *testing.T) {
	s := newTestServer(t)
	auth := http.Header{"Private-Token": {s.AdminToken}}
	require.NoError(t, s.Handle("GET /api/v3/projects/{id}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	})))
	status, _, _ := do(t, s, "GET", "/api/v3/projects/1", auth, nil)
	assert.Equal(t, http.StatusTeapot, status)
	status, _, _ = do(t, s, "GET", "/api/v3/projects", auth, nil)
	assert.Equal(t, http.StatusOK, status, "the other routes stay")
	status, _, _ = do(t, s, "GET", "/api/v3/projects/1/events", auth, nil)
	assert.Equal(t, http.StatusNotFound, status, "the fake's own route: no project 1")
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
	s := mustServer(t)
	defer s.Close()
	s.api("GET /boom", rule{}, func(*call) error { panic("boom") })
	status, _, body := do(t, s, "GET", "/api/v3/boom", http.Header{"Private-Token": {s.AdminToken}}, nil)
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.JSONEq(t, `{"message":"500 Internal Server Error"}`, body)
	assert.Equal(t, 1, s.Panics())
	// The lock was released: the server still answers.
	status, _, _ = do(t, s, "GET", "/api/v3/nowhere", http.Header{"Private-Token": {s.AdminToken}}, nil)
	assert.Equal(t, http.StatusNotFound, status)
}

// testCall builds a call on a recorder for the writers' unit tests.
func testCall(t *testing.T, target string) (*call, *httptest.ResponseRecorder) {
	r := httptest.NewRequest("GET", target, nil)
	w := httptest.NewRecorder()
	c := &call{w: w, r: r}
	require.NoError(t, c.readParams(&route{}))
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
		linkPerPage                         string
	}{
		{"", "45", "3", "20", "1", "2", "", 1, 20, []string{"next", "first", "last"}, ""},
		{"?page=2", "45", "3", "20", "2", "3", "1", 21, 20, []string{"prev", "next", "first", "last"}, ""},
		{"?page=3", "45", "3", "20", "3", "", "2", 41, 5, []string{"prev", "first", "last"}, ""},
		{"?per_page=500", "45", "1", "100", "1", "", "", 1, 45, []string{"first", "last"}, "100"},
		{"?per_page=100000", "45", "1", "100", "1", "", "", 1, 45, []string{"first", "last"}, "100"},
		{"?per_page=99999999999999999999999", "45", "1", "100", "1", "", "", 1, 45, []string{"first", "last"}, "100"},
		{"?per_page=0&page=-4", "45", "3", "20", "1", "2", "", 1, 20, []string{"next", "first", "last"}, "20"},
		{"?per_page=-5", "45", "3", "20", "1", "2", "", 1, 20, []string{"next", "first", "last"}, "20"},
		{"?per_page=abc&page=xyz", "45", "3", "20", "1", "2", "", 1, 20, []string{"next", "first", "last"}, "20"},
		{"?page=9", "45", "3", "20", "9", "", "8", 0, 0, []string{"prev", "first", "last"}, ""},
		{"?page=999999999999999999", "45", "3", "20", "999999999999999999", "", "999999999999999998", 0, 0, []string{"prev", "first", "last"}, ""},
	}
	for _, tt := range tests {
		c, w := testCall(t, "http://fake.example/api/v3/projects"+tt.query)
		require.NoError(t, page(c, items, render))
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
			require.True(t, strings.HasPrefix(part, "<http://fake.example/api/v3/projects?"), part)
			u, err := url.Parse(strings.TrimPrefix(part[:strings.Index(part, ">")], "<"))
			require.NoError(t, err)
			assert.Equal(t, tt.linkPerPage, u.Query().Get("per_page"), "per_page in Link is clamped as in X-Per-Page: %s", tt.query)
			if rel := rels[len(rels)-1]; rel == "next" || rel == "prev" {
				assert.NotEqual(t, "0", u.Query().Get("page"))
			}
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
	c, w := testCall(t, "http://fake.example/api/v3/projects?private_token=t&b=2&a=1")
	require.NoError(t, page(c, []int{}, render))
	assert.Equal(t, "0", w.Header().Get("X-Total-Pages"))
	assert.Equal(t, `<http://fake.example/api/v3/projects?a=1&b=2&page=1&private_token=t>; rel="first", <http://fake.example/api/v3/projects?a=1&b=2&page=0&private_token=t>; rel="last"`, w.Header().Get("Link"),
		"every parameter repeated, sorted, the token included")
	assert.Equal(t, "[]", w.Body.String())
}

func TestErrorShapes(t *testing.T) {
	tests := []struct {
		err    error
		status int
		body   string
	}{
		{errNotFound("Project"), 404, `{"message":"404 Project Not Found"}`},
		{errNotFound(""), 404, `{"message":"404 Not found"}`},
		{errMissing("title"), 400, `{"message":"400 (Bad request) \"title\" not given"}`},
		{errFields(map[string]any{"title": []string{"is invalid"}, "namespace": map[string]any{"name": []string{"too long"}}}),
			400, `{"message":{"title":["is invalid"],"namespace":{"name":["too long"]}}}`},
		{errInvalid("title", "is invalid"), 400, `{"message":{"title":["is invalid"]}}`},
		{errError(416, "416 Range Not Satisfiable"), 416, `{"error":"416 Range Not Satisfiable"}`},
		{errList(422, "Name has already been taken"), 422, `["Name has already been taken"]`},
		{errForbidden, 403, `{"message":"403 Forbidden"}`},
		{errUnauthorized, 401, `{"message":"401 Unauthorized"}`},
		{errTooLarge, 413, `{"message":"413 Request Entity Too Large"}`},
		{errConflict("409 Conflict"), 409, `{"message":"409 Conflict"}`},
		{errBadRequest("400 (Bad request) x"), 400, `{"message":"400 (Bad request) x"}`},
		{errors.New("not an API error"), 500, `{"message":"500 Internal Server Error"}`},
		{&apiError{status: 200, body: func() {}}, 500, `{"message":"500 Internal Server Error"}`},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		writeError(w, tt.err)
		assert.Equal(t, tt.status, w.Code)
		assert.JSONEq(t, tt.body, w.Body.String())
		assert.NotEmpty(t, tt.err.Error())
	}
	w := httptest.NewRecorder()
	writeError(w, errNotModified)
	assert.Equal(t, 304, w.Code)
	assert.Empty(t, w.Body.String())
}

func TestParameterReaders(t *testing.T) {
	c, _ := testCall(t, "http://fake.example/x?n=12&neg=-3&bad=1x&t=TRUE&f=nope&on=on&labels=a,+b,,c&labels=d&labels[]=e&ts=2016-01-04T15:31:46Z&date=2016-01-04&badtime=soon&empty=")
	n, present, err := c.intParam("n")
	assert.Equal(t, []any{12, true, nil}, []any{n, present, err})
	n, _, err = c.intParam("neg")
	assert.Equal(t, []any{-3, nil}, []any{n, err})
	_, present, err = c.intParam("absent")
	assert.NoError(t, err)
	assert.False(t, present)
	_, _, err = c.intParam("empty")
	assert.NoError(t, err)
	v, present := c.boolParam("t")
	assert.True(t, v && present)
	v, present = c.boolParam("f")
	assert.True(t, !v && present)
	v, _ = c.boolParam("on")
	assert.True(t, v)
	_, present = c.boolParam("none")
	assert.False(t, present)
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, c.listParam("labels"))
	assert.True(t, c.has("labels"))
	tm, present, err := c.timeParam("ts")
	assert.True(t, present && err == nil)
	assert.Equal(t, 2016, tm.Year())
	_, present, err = c.timeParam("date")
	assert.True(t, present && err == nil)
	_, present, err = c.timeParam("none")
	assert.True(t, !present && err == nil)
	dst := false
	c.setBool("t", &dst)
	assert.True(t, dst)
	str := "keep"
	c.setStr("none", &str)
	assert.Equal(t, "keep", str)
	c.setStr("n", &str)
	assert.Equal(t, "12", str)
	assert.Equal(t, "", c.str("none"))

	_, _, err = c.intParam("bad")
	assert.Equal(t, errInvalid("bad", "is invalid"), err)
	_, _, err = c.timeParam("badtime")
	assert.Equal(t, errInvalid("badtime", "is invalid"), err)
}

func TestNameParamLimits(t *testing.T) {
	long := strings.Repeat("é", 256)
	c, _ := testCall(t, "http://fake.example/x?ok="+url.QueryEscape(strings.Repeat("é", 255))+"&long="+url.QueryEscape(long)+"&blank=+")
	v, present, err := c.nameParam("ok", "title", true)
	assert.NoError(t, err)
	assert.True(t, present)
	assert.Len(t, []rune(v), 255, "255 characters, not bytes")
	_, _, err = c.nameParam("long", "title", false)
	assert.Equal(t, errInvalid("title", "is too long (maximum is 255 characters)"), err)
	_, present, err = c.nameParam("blank", "name", false)
	assert.NoError(t, err, "a blank optional name is not sent")
	assert.False(t, present)
	_, _, err = c.nameParam("blank", "name", true)
	assert.Equal(t, errMissing("blank"), err)
	_, present, err = c.nameParam("absent", "name", false)
	assert.False(t, present)
	assert.NoError(t, err)
}

func TestBodyParameters(t *testing.T) {
	read := func(ctype, body string) (url.Values, error) {
		r := httptest.NewRequest("POST", "http://fake.example/x?a=1&q=query", strings.NewReader(body))
		r.Header.Set("Content-Type", ctype)
		c := &call{w: httptest.NewRecorder(), r: r}
		err := c.readParams(&route{})
		return c.form, err
	}
	form, err := read("application/x-www-form-urlencoded", "b=2&a=3")
	require.NoError(t, err)
	assert.Equal(t, "2", form.Get("b"))
	assert.Equal(t, "3", form.Get("a"), "the body wins")
	assert.Equal(t, "query", form.Get("q"))

	form, err = read("application/json; charset=utf-8",
		`{"a":"3","n":5,"f":1.5,"t":true,"no":false,"nil":null,"labels":["x","y"],"empty":[],"info":{"name":"r","deep":{"k":[1]}}}`)
	require.NoError(t, err)
	assert.Equal(t, url.Values{
		"a": {"3"}, "q": {"query"}, "n": {"5"}, "f": {"1.5"}, "t": {"true"}, "no": {"false"},
		"labels[]": {"x", "y"}, "empty[]": nil, "info[name]": {"r"}, "info[deep][k][]": {"1"},
	}, form)

	for body, msg := range map[string]string{
		`{"a":`:  "400 (Bad request) invalid JSON body: unexpected EOF",
		`[1,2`:   "400 (Bad request) invalid JSON body: unexpected EOF",
		`{} {}`:  "400 (Bad request) invalid JSON body: data after the value",
		`null x`: "400 (Bad request) invalid JSON body: data after the value",
	} {
		_, err = read("application/json", body)
		assert.Equal(t, errBadRequest(msg), err, body)
	}
	for _, body := range []string{"  ", "null", "[1,2]", `"text"`, "5"} {
		form, err = read("application/json", body)
		require.NoError(t, err, "a body that is not an object has no parameters: %s", body)
		assert.Equal(t, url.Values{"a": {"1"}, "q": {"query"}}, form, body)
	}

	_, err = read("application/x-www-form-urlencoded", "%zz=%")
	assert.Equal(t, errBadRequest("400 (Bad request) malformed form body"), err)
	_, err = read("multipart/form-data; boundary=x", "garbage")
	assert.Equal(t, errBadRequest("400 (Bad request) malformed multipart body"), err)
	_, err = read("application/json", `{"a":"`+strings.Repeat("x", maxBody)+`"}`)
	assert.Equal(t, errTooLarge, err)
	form, err = read("text/plain", "a=9")
	require.NoError(t, err)
	assert.Equal(t, "1", form.Get("a"), "other content types carry no parameters")
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
