package collabtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// getPatterns lists the server's GET routes.
func getPatterns(s *Server) []string {
	s.router.mu.RLock()
	defer s.router.mu.RUnlock()
	var out []string
	for _, l := range s.router.layers {
		for p := range l.handlers {
			if strings.HasPrefix(p, "GET ") {
				out = append(out, strings.TrimPrefix(p, "GET "))
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestHeadAnswersEveryGetRoute(t *testing.T) {
	w := newWorld(t)
	s := w.s
	s.mu.Lock()
	sha := s.projects[w.pid].branches["master"].commitID
	s.mu.Unlock()
	values := map[string]string{
		"{id}": w.p(), "{gid}": strconv.Itoa(w.gid), "{issue_id}": strconv.Itoa(w.issue), "{mr_id}": strconv.Itoa(w.mr),
		"{note_id}": strconv.Itoa(w.note), "{build_id}": strconv.Itoa(w.done), "{hook_id}": strconv.Itoa(w.hook),
		"{milestone_id}": strconv.Itoa(w.milestone), "{user_id}": strconv.Itoa(w.bob.ID), "{sha}": sha,
		"{query}": "Demo", "{branch...}": "feature/x",
	}
	patterns := getPatterns(s)
	require.Greater(t, len(patterns), 30)
	for _, pattern := range patterns {
		path := pattern
		if strings.HasPrefix(path, "/ci/") {
			path = strings.ReplaceAll(path, "{id}", strconv.Itoa(w.done)) // the runner API's build id
		}
		for k, v := range values {
			path = strings.ReplaceAll(path, k, v)
		}
		if strings.Contains(path, "{award_id}") {
			if strings.Contains(path, "/notes/") || strings.Contains(path, "/merge_requests/") {
				continue // the world's award is on the issue
			}
			path = strings.ReplaceAll(path, "{award_id}", strconv.Itoa(w.award))
		}
		if strings.Contains(path, "/merge_requests/") && strings.Contains(path, "/notes/") {
			continue // the world's note is on the issue
		}
		h := http.Header{"Private-Token": {s.AdminToken}, "Build-Token": {w.buildToken}}
		getStatus, getHeader, getBody := do(t, s, "GET", path, h, nil)
		require.Equal(t, http.StatusOK, getStatus, "GET %s: %s", path, getBody)
		headStatus, headHeader, headBody := do(t, s, "HEAD", path, h, nil)
		assert.Equal(t, getStatus, headStatus, "HEAD %s", path)
		assert.Empty(t, headBody, "HEAD %s", path)
		for _, k := range []string{"Content-Type", "X-Total", "X-Per-Page", "Link"} {
			assert.Equal(t, getHeader.Get(k), headHeader.Get(k), "HEAD %s: %s", path, k)
		}
	}
}

func TestRawSlashBranchRoutes(t *testing.T) {
	s := newTestServer(t)
	pid := s.AddProject(s.AdminID, "Repo", visPrivate)
	s.AddBranch(pid, "feature/deep/x", "")
	auth := http.Header{"Private-Token": {s.AdminToken}}
	base := "/api/v3/projects/root%2Frepo/repository/branches/"
	for _, name := range []string{"feature/deep/x", "feature%2Fdeep%2Fx", "feature/deep%2Fx"} {
		status, _, body := do(t, s, "GET", base+name, auth, nil)
		require.Equal(t, http.StatusOK, status, name)
		assert.Contains(t, body, `"name":"feature/deep/x"`)
		status, _, body = do(t, s, "PUT", base+name+"/protect", auth, nil)
		require.Equal(t, http.StatusOK, status, name)
		assert.Contains(t, body, `"protected":true`)
		status, _, body = do(t, s, "PUT", base+name+"/unprotect", auth, nil)
		require.Equal(t, http.StatusOK, status, name)
		assert.Contains(t, body, `"protected":false`)
	}
	status, _, body := do(t, s, "GET", base+"feature/none", auth, nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"message":"404 Branch Not Found"}`, body)
	status, _, body = do(t, s, "PUT", base+"feature/none/protect", auth, nil)
	assert.Equal(t, http.StatusNotFound, status)
	assert.JSONEq(t, `{"message":"404 Branch Not Found"}`, body)
	status, _, _ = do(t, s, "PUT", base+"feature/deep/x", auth, nil)
	assert.Equal(t, http.StatusMethodNotAllowed, status, "PUT on a branch itself")
	status, _, _ = do(t, s, "GET", base, auth, nil)
	assert.Equal(t, http.StatusNotFound, status, "an empty branch name")
}

func TestNameLengthLimits(t *testing.T) {
	w := newWorld(t)
	s := w.s
	ok, long := strings.Repeat("n", 255), strings.Repeat("n", 256)
	tooLong := func(key string) string {
		return `{"message":{"` + key + `":["is too long (maximum is 255 characters)"]}}`
	}
	tests := []struct {
		method, path, param, errKey string
		extra                       url.Values
	}{
		{"POST", "/projects", "name", "name", nil},
		{"PUT", "/projects/{pid}", "name", "name", nil},
		{"POST", "/groups", "name", "name", url.Values{"path": {"grp"}}},
		{"PUT", "/groups/{gid}", "name", "name", nil},
		{"POST", "/projects/{pid}/issues", "title", "title", nil},
		{"PUT", "/projects/{pid}/issues/{issue}", "title", "title", nil},
		{"POST", "/projects/{pid}/merge_requests", "title", "title", url.Values{"source_branch": {"master"}, "target_branch": {"feature/x"}}},
		{"PUT", "/projects/{pid}/merge_requests/{mr}", "title", "title", nil},
		{"POST", "/projects/{pid}/milestones", "title", "title", nil},
		{"PUT", "/projects/{pid}/milestones/{milestone}", "title", "title", nil},
		{"POST", "/projects/{pid}/labels", "name", "title", url.Values{"color": {"#FFFFFF"}}},
		{"PUT", "/projects/{pid}/labels", "new_name", "title", url.Values{"name": {"old"}}},
	}
	r := strings.NewReplacer("{pid}", w.p(), "{gid}", strconv.Itoa(w.gid), "{issue}", strconv.Itoa(w.issue),
		"{mr}", strconv.Itoa(w.mr), "{milestone}", strconv.Itoa(w.milestone))
	send := func(method, path string, v url.Values) (int, string) {
		status, _, body := do(t, s, method, "/api/v3"+r.Replace(path), http.Header{"Private-Token": {s.AdminToken},
			"Content-Type": {"application/json"}}, strings.NewReader(mustJSON(t, flat(v))))
		return status, body
	}
	for i, tt := range tests {
		v := url.Values{tt.param: {long}}
		for k, vs := range tt.extra {
			v[k] = vs
		}
		status, body := send(tt.method, tt.path, v)
		assert.Equal(t, http.StatusBadRequest, status, "%s %s", tt.method, tt.path)
		assert.JSONEq(t, tooLong(tt.errKey), body, "%s %s", tt.method, tt.path)
		// 255 characters are accepted (made unique per call).
		v[tt.param] = []string{ok[:250] + strconv.Itoa(10000+i)}
		status, body = send(tt.method, tt.path, v)
		assert.Less(t, status, 300, "%s %s: %s", tt.method, tt.path, body)
	}
}

// flat turns single-valued url.Values into a JSON object's map.
func flat(v url.Values) map[string]any {
	m := map[string]any{}
	for k, vs := range v {
		m[k] = vs[0]
	}
	return m
}

func TestBodyOverTheLimitIs413(t *testing.T) {
	s := newTestServer(t)
	pid := s.AddProject(s.AdminID, "Big", visPrivate)
	big := strings.Repeat("x", maxBody+1)
	for _, ct := range []string{"application/x-www-form-urlencoded", "application/json"} {
		body := "title=" + big
		if ct == "application/json" {
			body = `{"title":"` + big + `"}`
		}
		status, _, resp := do(t, s, "POST", "/api/v3/projects/"+strconv.Itoa(pid)+"/issues",
			http.Header{"Private-Token": {s.AdminToken}, "Content-Type": {ct}}, strings.NewReader(body))
		assert.Equal(t, http.StatusRequestEntityTooLarge, status, ct)
		assert.JSONEq(t, `{"message":"413 Request Entity Too Large"}`, resp)
	}
}

func TestLinkClampedOverHTTP(t *testing.T) {
	s := newTestServer(t)
	for i := 0; i < 3; i++ {
		s.AddProject(s.AdminID, "p"+strconv.Itoa(i), visPublic)
	}
	for query, want := range map[string]string{"per_page=100000": "100", "per_page=abc": "20", "per_page=-5": "20"} {
		status, h, _ := do(t, s, "GET", "/api/v3/projects?"+query+"&page=-3", http.Header{"Private-Token": {s.AdminToken}}, nil)
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, want, h.Get("X-Per-Page"), query)
		assert.Equal(t, "1", h.Get("X-Page"), query)
		assert.Contains(t, h.Get("Link"), "?page=1&per_page="+want+">", query)
		assert.NotContains(t, h.Get("Link"), "page=-3", query)
	}
}

func TestCloneURLs(t *testing.T) {
	s := newTestServer(t)
	pid := s.AddProject(s.AdminID, "Demo", visPrivate)
	status, _, body := do(t, s, "GET", "/api/v3/projects/"+strconv.Itoa(pid), http.Header{"Private-Token": {s.AdminToken}}, nil)
	require.Equal(t, http.StatusOK, status)
	var p struct{ SSH, HTTP string }
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m))
	p.SSH, p.HTTP = m["ssh_url_to_repo"].(string), m["http_url_to_repo"].(string)
	assert.Equal(t, "git@127.0.0.1:root/demo.git", p.SSH)
	assert.Equal(t, s.URL+"/root/demo.git", p.HTTP)
}

func TestSeedingMistakesAreReported(t *testing.T) {
	s := newTestServer(t)
	assert.Empty(t, s.AddToken(s.AdminID, TokenKind(7)), "an unknown kind")
	assert.Zero(t, s.AddProject(999, "x", visPrivate))
	assert.Zero(t, s.AddProject(s.AdminID, "x", 5))
	s.AddMember(999, s.AdminID, levelDeveloper)
	assert.Zero(t, s.AddIssue(999, s.AdminID, "t"))
	assert.Zero(t, s.AddBuild(999, BuildSpec{}))
	assert.Zero(t, s.AddUser("", false).ID)
	s.SetMaxArtifactsSize(0)
	err := s.Err()
	require.Error(t, err)
	for _, want := range []string{"AddToken", "AddProject: no user 999", "visibility 5", "AddMember", "AddIssue", "AddBuild", "AddUser", "SetMaxArtifactsSize"} {
		assert.Contains(t, err.Error(), want)
	}

	rec := &recordingTB{TB: t}
	bound := NewTestServer(rec)
	bound.AddMember(bound.AddProject(bound.AdminID, "p", visPublic), bound.AdminID, 35)
	assert.Equal(t, []string{"collabtest: AddMember: access level 35 is not 10, 20, 30, 40 or 50 (guest..owner)"}, rec.errors)
}

// recordingTB keeps the errors a NewTestServer reports instead of failing.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestEscapedProjectAndGroupPaths(t *testing.T) {
	s := newTestServer(t)
	gid := s.AddGroup(s.AdminID, "My Team", "my.team", visPublic)
	pid := s.AddGroupProject(gid, s.AdminID, "my.site", visPublic)
	s.AddIssue(pid, s.AdminID, "Dots")
	require.NoError(t, s.Err())
	auth := http.Header{"Private-Token": {s.AdminToken}}
	for _, path := range []string{
		"/api/v3/projects/my%2Eteam%2Fmy%2Esite",
		"/api/v3/projects/my%2Eteam%2Fmy%2Esite.json",
		"/api/v3/projects/my%2Eteam%2Fmy%2Esite/issues",
		"/api/v3/projects/MY%2ETEAM%2FMY%2ESITE/issues.json",
		"/api/v3/groups/my%2Eteam",
		"/api/v3/groups/my%2Eteam/projects",
		"/api/v3/groups/my%2Eteam/members.json",
	} {
		status, _, body := do(t, s, "GET", path, auth, nil)
		assert.Equal(t, http.StatusOK, status, "%s: %s", path, body)
	}
	status, _, body := do(t, s, "GET", "/api/v3/projects/my%2Eteam%2Fmy.site", auth, nil)
	assert.Equal(t, http.StatusNotFound, status, "an unescaped dot starts a format suffix")
	assert.JSONEq(t, `{"message":"404 Project Not Found"}`, body)
}
