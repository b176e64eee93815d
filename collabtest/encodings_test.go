package collabtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// world is the state every write endpoint is tried against: the same
// records with the same ids on each fresh server.
type world struct {
	s                                   *Server
	alice, bob                          User
	pid, other, gid, issue, mr, note    int
	milestone, hook, build, done, award int
	runnerToken, buildToken             string
	running                             int
}

func newWorld(t *testing.T) *world {
	s := newTestServer(t)
	w := &world{s: s}
	w.alice = s.AddUser("alice", false)
	w.bob = s.AddUser("bob", false)
	w.pid = s.AddProject(s.AdminID, "Demo", visInternal)
	w.other = s.AddProject(w.alice.ID, "Other", visPublic)
	w.gid = s.AddGroup(s.AdminID, "Team", "team", visInternal)
	s.AddGroupMember(w.gid, w.bob.ID, levelReporter)
	s.AddMember(w.pid, w.bob.ID, levelReporter)
	s.AddBranch(w.pid, "feature/x", "")
	w.issue = s.AddIssue(w.pid, s.AdminID, "Bug", "bug")
	w.mr = s.AddMergeRequest(w.pid, s.AdminID, "feature/x", "master", "Feature")
	w.note = s.AddNote(w.pid, "Issue", w.issue, s.AdminID, "First")
	w.done = s.AddBuild(w.pid, BuildSpec{Status: "success", Artifacts: []byte("zip"), Trace: "log"})
	w.build = s.AddBuild(w.pid, BuildSpec{Status: "pending"})
	_, w.runnerToken = s.AddRunner("shared")
	w.buildToken = s.ProjectRunnersToken(w.pid)
	require.NoError(t, s.Err())
	// A milestone, a hook, an award and a running build, through the API.
	w.milestone = w.post(t, "/api/v3/projects/"+w.p()+"/milestones", url.Values{"title": {"v1"}})
	w.hook = w.post(t, "/api/v3/projects/"+w.p()+"/hooks", url.Values{"url": {"http://example.com/h"}})
	w.post(t, "/api/v3/projects/"+w.p()+"/labels", url.Values{"name": {"old"}, "color": {"#FF0000"}})
	w.award = w.post(t, fmt.Sprintf("/api/v3/projects/%d/issues/%d/award_emoji", w.pid, w.issue), url.Values{"name": {"tada"}})
	w.running = w.post(t, "/ci/api/v1/builds/register", url.Values{"token": {w.runnerToken}})
	return w
}

func (w *world) p() string { return strconv.Itoa(w.pid) }

// post creates a record with a form body and returns its id.
func (w *world) post(t *testing.T, path string, v url.Values) int {
	status, _, body := do(t, w.s, "POST", path, http.Header{
		"Private-Token": {w.s.AdminToken}, "Content-Type": {"application/x-www-form-urlencoded"}}, strings.NewReader(v.Encode()))
	require.Equal(t, http.StatusCreated, status, body)
	m := regexp.MustCompile(`"id":(\d+)`).FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// formValues flattens typed parameters as a form client sends them:
// arrays as name[], objects as name[key].
func formValues(params map[string]any) url.Values {
	out := url.Values{}
	var add func(key string, v any)
	add = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				add(key+"["+k+"]", sub)
			}
		case []any:
			for _, sub := range v {
				add(key+"[]", sub)
			}
		default:
			out.Add(key, fmt.Sprint(v))
		}
	}
	for k, v := range params {
		add(k, v)
	}
	return out
}

// encodeBody encodes params as a form, multipart or JSON body.
func encodeBody(t *testing.T, how string, params map[string]any) (io.Reader, string) {
	switch how {
	case "form":
		return strings.NewReader(formValues(params).Encode()), "application/x-www-form-urlencoded"
	case "multipart":
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		v := formValues(params)
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, val := range v[k] {
				require.NoError(t, mw.WriteField(k, val))
			}
		}
		require.NoError(t, mw.Close())
		return &buf, mw.FormDataContentType()
	default:
		b := jsonBody(t, params)
		return strings.NewReader(b), "application/json"
	}
}

func jsonBody(t *testing.T, params map[string]any) string {
	var b strings.Builder
	b.WriteString("{")
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:%s", k, mustJSON(t, params[k]))
	}
	b.WriteString("}")
	return b.String()
}

var (
	hexRE  = regexp.MustCompile(`[0-9a-f]{20,}|"short_id":"[0-9a-f]+"`)
	timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
)

// TestEveryWriteEndpointReadsFormJSONAndMultipart sends each write endpoint
// the same parameters as a form, a multipart and a JSON body, each on a
// fresh, identical server, and requires the same status and body (tokens,
// commit ids and times aside, which are random).
func TestEveryWriteEndpointReadsFormJSONAndMultipart(t *testing.T) {
	type endpoint struct {
		method, path string // path with {pid} project, {issue} issue, {mr} mr, {note} note, {gid} group
		params       map[string]any
		status       int
		as           string // "bob" to call as bob; default the admin
	}
	arr := func(v ...any) []any { return v }
	endpoints := []endpoint{
		{"POST", "/projects", map[string]any{"name": "New", "visibility_level": 10, "issues_enabled": false, "description": "d"}, 201, ""},
		{"POST", "/projects/user/{alice}", map[string]any{"name": "Hers", "public": true, "wiki_enabled": "false"}, 201, ""},
		{"POST", "/projects/fork/{pid}", nil, 201, "bob"},
		{"PUT", "/projects/{pid}", map[string]any{"name": "Renamed", "default_branch": "feature/x", "builds_enabled": false, "visibility_level": 20}, 200, ""},
		{"DELETE", "/projects/{pid}", nil, 200, ""},
		{"POST", "/projects/{pid}/star", nil, 201, ""},
		{"DELETE", "/projects/{pid}/star", nil, 304, ""},
		{"POST", "/projects/{pid}/archive", nil, 201, ""},
		{"POST", "/projects/{pid}/unarchive", nil, 201, ""},
		{"POST", "/projects/{pid}/share", map[string]any{"group_id": "@gid", "group_access": 30}, 201, ""},
		{"POST", "/projects/{pid}/fork/{other}", nil, 201, ""},
		{"DELETE", "/projects/{pid}/fork", nil, 304, ""},
		{"POST", "/groups", map[string]any{"name": "Ops", "path": "ops", "visibility_level": 20, "description": "d"}, 201, ""},
		{"PUT", "/groups/{gid}", map[string]any{"name": "Team 2", "description": "new"}, 200, ""},
		{"DELETE", "/groups/{gid}", nil, 200, ""},
		{"POST", "/groups/{gid}/projects/{other}", nil, 201, ""},
		{"POST", "/projects/{pid}/members", map[string]any{"user_id": "@alice", "access_level": 30}, 201, ""},
		{"PUT", "/projects/{pid}/members/{bob}", map[string]any{"access_level": 40}, 200, ""},
		{"DELETE", "/projects/{pid}/members/{bob}", nil, 200, ""},
		{"POST", "/groups/{gid}/members", map[string]any{"user_id": "@alice", "access_level": 20}, 201, ""},
		{"PUT", "/groups/{gid}/members/{bob}", map[string]any{"access_level": 30}, 200, ""},
		{"DELETE", "/groups/{gid}/members/{bob}", nil, 200, ""},
		{"POST", "/projects/{pid}/hooks", map[string]any{"url": "https://example.com/x", "issues_events": true, "push_events": false}, 201, ""},
		{"PUT", "/projects/{pid}/hooks/{hook}", map[string]any{"url": "https://example.com/y", "note_events": 1}, 200, ""},
		{"DELETE", "/projects/{pid}/hooks/{hook}", nil, 200, ""},
		{"PUT", "/projects/{pid}/repository/branches/feature/x/protect", nil, 200, ""},
		{"PUT", "/projects/{pid}/repository/branches/feature%2Fx/unprotect", nil, 200, ""},
		{"PUT", "/application/settings", map[string]any{"signup_enabled": false, "default_projects_limit": 20,
			"restricted_visibility_levels": arr(10, 20), "home_page_url": "https://example.com"}, 200, ""},
		{"POST", "/projects/{pid}/issues", map[string]any{"title": "Typed", "labels": arr("a", "b"), "assignee_id": "@alice",
			"milestone_id": "@milestone", "description": "x"}, 201, ""},
		{"POST", "/projects/{pid}/issues", map[string]any{"title": "Comma", "labels": "a,b"}, 201, ""},
		{"PUT", "/projects/{pid}/issues/{issue}", map[string]any{"state_event": "close", "labels": arr("c"), "assignee_id": "@bob"}, 200, ""},
		{"DELETE", "/projects/{pid}/issues/{issue}", nil, 200, ""},
		{"POST", "/projects/{pid}/issues/{issue}/move", map[string]any{"to_project_id": "@other"}, 201, ""},
		{"POST", "/projects/{pid}/issues/{issue}/subscription", nil, 304, ""},
		{"DELETE", "/projects/{pid}/issues/{issue}/subscription", nil, 200, ""},
		{"POST", "/projects/{pid}/issues/{issue}/notes", map[string]any{"body": "Hello"}, 201, ""},
		{"PUT", "/projects/{pid}/issues/{issue}/notes/{note}", map[string]any{"body": "Edited"}, 200, ""},
		{"DELETE", "/projects/{pid}/issues/{issue}/notes/{note}", nil, 200, ""},
		{"POST", "/projects/{pid}/merge_requests/{mr}/notes", map[string]any{"body": "LGTM"}, 201, ""},
		{"POST", "/projects/{pid}/issues/{issue}/award_emoji", map[string]any{"name": "thumbsup"}, 201, ""},
		{"DELETE", "/projects/{pid}/issues/{issue}/award_emoji/{award}", nil, 200, ""},
		{"POST", "/projects/{pid}/issues/{issue}/notes/{note}/award_emoji", map[string]any{"name": "heart"}, 201, ""},
		{"POST", "/projects/{pid}/milestones", map[string]any{"title": "v2", "due_date": "2030-01-02"}, 201, ""},
		{"PUT", "/projects/{pid}/milestones/{milestone}", map[string]any{"state_event": "close", "title": "v1.1"}, 200, ""},
		{"POST", "/projects/{pid}/labels", map[string]any{"name": "new", "color": "#00FF00", "description": "d"}, 201, ""},
		{"PUT", "/projects/{pid}/labels", map[string]any{"name": "old", "new_name": "renamed", "color": "#0000FF"}, 200, ""},
		{"DELETE", "/projects/{pid}/labels", map[string]any{"name": "old"}, 200, ""},
		{"POST", "/projects/{pid}/labels/old/subscription", nil, 201, ""},
		{"DELETE", "/projects/{pid}/labels/old/subscription", nil, 304, ""},
		{"POST", "/projects/{pid}/merge_requests", map[string]any{"source_branch": "master", "target_branch": "feature/x",
			"title": "Back", "labels": arr("x"), "target_project_id": "@pid"}, 201, ""},
		{"PUT", "/projects/{pid}/merge_requests/{mr}", map[string]any{"title": "WIP: later", "state_event": "close"}, 200, ""},
		{"DELETE", "/projects/{pid}/merge_requests/{mr}", nil, 200, ""},
		{"PUT", "/projects/{pid}/merge_requests/{mr}/merge", map[string]any{"merge_commit_message": "m",
			"should_remove_source_branch": true, "merge_when_build_succeeds": true}, 200, ""},
		{"PUT", "/projects/{pid}/merge_requests/{mr}/cancel_merge_when_build_succeeds", nil, 406, ""},
		{"POST", "/projects/{pid}/merge_requests/{mr}/subscription", nil, 304, ""},
		{"DELETE", "/projects/{pid}/merge_requests/{mr}/subscription", nil, 200, ""},
		{"POST", "/projects/{pid}/builds/{running}/cancel", nil, 201, ""},
		{"POST", "/projects/{pid}/builds/{done}/retry", nil, 201, ""},
		{"POST", "/projects/{pid}/builds/{done}/erase", nil, 201, ""},
		{"POST", "/projects/{pid}/builds/{done}/artifacts/keep", nil, 200, ""},
		{"POST", "/ci/api/v1/builds/register", map[string]any{"token": "RUNNER", "info": map[string]any{"name": "r1", "version": "9.0"}}, 404, ""},
		{"PUT", "/ci/api/v1/builds/{running}", map[string]any{"token": "RUNNER", "state": "success", "trace": "done\n"}, 200, ""},
		{"DELETE", "/ci/api/v1/builds/{done}/artifacts", map[string]any{"token": "BUILD"}, 200, ""},
	}
	// What some answers must show, so that a parameter every encoding
	// dropped alike cannot pass.
	shows := map[string]string{
		"POST /projects":                                `"issues_enabled":false`,
		"PUT /projects/{pid}":                           `"visibility_level":20`,
		"PUT /application/settings":                     `"restricted_visibility_levels":[10,20]`,
		"POST /projects/{pid}/issues":                   `"labels":["a","b"]`,
		"PUT /projects/{pid}/issues/{issue}":            `"labels":["c"]`,
		"POST /projects/{pid}/hooks":                    `"issues_events":"true"`,
		"PUT /projects/{pid}/hooks/{hook}":              `"note_events":"true"`,
		"POST /projects/{pid}/merge_requests":           `"labels":["x"]`,
		"PUT /ci/api/v1/builds/{running}":               `"status":"success"`,
		"POST /projects/{pid}/milestones":               `"due_date":"2030-01-02"`,
		"PUT /projects/{pid}/merge_requests/{mr}/merge": `"merge_when_build_succeeds":true`,
	}
	for _, ep := range endpoints {
		var results []string
		for _, how := range []string{"form", "multipart", "json"} {
			w := newWorld(t)
			ids := map[string]int{"pid": w.pid, "issue": w.issue, "mr": w.mr, "note": w.note, "gid": w.gid, "hook": w.hook,
				"milestone": w.milestone, "award": w.award, "running": w.running, "done": w.done, "other": w.other,
				"alice": w.alice.ID, "bob": w.bob.ID}
			var pairs []string
			for k, v := range ids {
				pairs = append(pairs, "{"+k+"}", strconv.Itoa(v))
			}
			path := strings.NewReplacer(pairs...).Replace(ep.path)
			if !strings.HasPrefix(path, "/ci/") {
				path = "/api/v3" + path
			}
			params := map[string]any{}
			for k, v := range ep.params {
				switch v {
				case "RUNNER":
					v = w.runnerToken
				case "BUILD":
					v = w.buildToken
				}
				if name, ok := v.(string); ok && strings.HasPrefix(name, "@") {
					v = ids[name[1:]]
				}
				params[k] = v
			}
			token := w.s.AdminToken
			if ep.as == "bob" {
				token = w.bob.Token
			}
			body, ctype := encodeBody(t, how, params)
			status, _, got := do(t, w.s, ep.method, path, http.Header{"Private-Token": {token}, "Content-Type": {ctype}}, body)
			assert.Equal(t, ep.status, status, "%s %s as %s: %s", ep.method, path, how, got)
			got = strings.ReplaceAll(got, w.s.URL, "URL")
			got = timeRE.ReplaceAllString(hexRE.ReplaceAllString(got, "HEX"), "TIME")
			results = append(results, fmt.Sprintf("%d %s", status, got))
		}
		if want, ok := shows[ep.method+" "+ep.path]; ok {
			assert.Contains(t, results[0], want, "%s %s", ep.method, ep.path)
		}
		assert.Equal(t, results[0], results[1], "%s %s: multipart differs from form", ep.method, ep.path)
		assert.Equal(t, results[0], results[2], "%s %s: JSON differs from form", ep.method, ep.path)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
