package collabtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// null stands for a JSON null in test parameters; form and multipart
// clients send it as an empty value.
type null struct{}

// MarshalJSON writes null.
func (null) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// encodeLenient encodes params as encodeBody does, with null as JSON null
// or as an empty form value.
func encodeLenient(t *testing.T, how string, params map[string]any) (io.Reader, string) {
	p := map[string]any{}
	for k, v := range params {
		if _, ok := v.(null); ok && how != "json" {
			v = ""
		}
		p[k] = v
	}
	return encodeBody(t, how, p)
}

// get reads a JSON record as the admin.
func (w *world) get(t *testing.T, path string) map[string]any {
	status, _, body := do(t, w.s, "GET", path, http.Header{"Private-Token": {w.s.AdminToken}}, nil)
	require.Equal(t, http.StatusOK, status, body)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	return m
}

var encodings = []string{"form", "multipart", "json"}

// TestNonObjectJSONBodies: a JSON body that is not an object supplies no
// parameters, as on deployed servers; one that is not JSON stays a 400.
func TestNonObjectJSONBodies(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/projects/{pid}/archive", 201},
		{"POST", "/projects/{pid}/star", 201},
		{"POST", "/projects/{pid}/issues/{issue}/subscription", 304},
		{"PUT", "/projects/{pid}/repository/branches/feature%2Fx/protect", 200},
		{"POST", "/projects/{pid}/issues", 400}, // title is required, and the body gave none
	} {
		for _, body := range []string{"null", `["title"]`, `"title"`, "42", "true"} {
			w := newWorld(t)
			path := "/api/v3" + strings.NewReplacer("{pid}", w.p(), "{issue}", fmt.Sprint(w.issue)).Replace(tc.path)
			status, _, got := do(t, w.s, tc.method, path,
				http.Header{"Private-Token": {w.s.AdminToken}, "Content-Type": {"application/json"}}, strings.NewReader(body))
			assert.Equal(t, tc.status, status, "%s %s %s: %s", tc.method, path, body, got)
			if tc.status == 400 {
				assert.Contains(t, got, `"title\" not given`, body)
			}
		}
		w := newWorld(t)
		path := "/api/v3" + strings.NewReplacer("{pid}", w.p(), "{issue}", fmt.Sprint(w.issue)).Replace(tc.path)
		status, _, got := do(t, w.s, tc.method, path,
			http.Header{"Private-Token": {w.s.AdminToken}, "Content-Type": {"application/json"}}, strings.NewReader(`nul`))
		assert.Equal(t, http.StatusBadRequest, status, got)
		assert.Contains(t, got, "invalid JSON body")
	}
}

// TestBlankAndNullValues: create and update copy only present, non-blank
// attributes; blank required ones are missing; labels is read directly.
func TestBlankAndNullValues(t *testing.T) {
	type check struct {
		path string // the record to read back, with the same placeholders
		key  string
		want any
	}
	for _, tc := range []struct {
		name         string
		only         string         // the one encoding the case applies to, if not all
		setup        map[string]any // PUT to path first, as a form, when not nil
		method, path string
		params       map[string]any
		status       int
		message      string // part of the 400 message
		checks       []check
	}{
		{
			name: "issue close with blank title and description", method: "PUT", path: "/projects/{pid}/issues/{issue}",
			setup:  map[string]any{"description": "keep me"},
			params: map[string]any{"title": "", "description": "  ", "state_event": "close"}, status: 200,
			checks: []check{{"", "state", "closed"}, {"", "title", "Bug"}, {"", "description", "keep me"}, {"", "labels", []any{"bug"}}},
		},
		{
			name: "issue close with nulls", method: "PUT", path: "/projects/{pid}/issues/{issue}",
			setup:  map[string]any{"description": "keep me"},
			params: map[string]any{"title": null{}, "description": null{}, "state_event": "close"}, status: 200,
			checks: []check{{"", "state", "closed"}, {"", "title", "Bug"}, {"", "description", "keep me"}, {"", "labels", []any{"bug"}}},
		},
		{
			// Only JSON has a null apart from "": a form's empty labels clear them.
			name: "null labels leave an issue's labels", only: "json", method: "PUT", path: "/projects/{pid}/issues/{issue}",
			params: map[string]any{"labels": null{}, "title": "Renamed"}, status: 200,
			checks: []check{{"", "labels", []any{"bug"}}, {"", "title", "Renamed"}},
		},
		{
			name: "empty labels clear an issue's labels", method: "PUT", path: "/projects/{pid}/issues/{issue}",
			params: map[string]any{"labels": ""}, status: 200,
			checks: []check{{"", "labels", []any{}}},
		},
		{
			name: "an empty array and an empty object are absent", method: "PUT", path: "/projects/{pid}/issues/{issue}",
			setup:  map[string]any{"description": "keep me"},
			params: map[string]any{"labels": []any{}, "description": map[string]any{}, "title": "Renamed"}, status: 200,
			checks: []check{{"", "labels", []any{"bug"}}, {"", "description", "keep me"}, {"", "title", "Renamed"}},
		},
		{
			name: "empty labels clear a merge request's labels", method: "PUT", path: "/projects/{pid}/merge_requests/{mr}",
			setup:  map[string]any{"labels": "x,y"},
			params: map[string]any{"labels": "", "title": null{}}, status: 200,
			checks: []check{{"", "labels", []any{}}, {"", "title", "Feature"}},
		},
		{
			name: "milestone close with nulls", method: "PUT", path: "/projects/{pid}/milestones/{milestone}",
			setup:  map[string]any{"description": "plan", "due_date": "2030-01-02"},
			params: map[string]any{"title": null{}, "description": null{}, "due_date": null{}, "state_event": "close"}, status: 200,
			checks: []check{{"", "state", "closed"}, {"", "title", "v1"}, {"", "description", "plan"}, {"", "due_date", "2030-01-02"}},
		},
		{
			name: "false is kept", method: "PUT", path: "/projects/{pid}/hooks/{hook}",
			params: map[string]any{"url": "https://example.com/z", "push_events": false, "token": ""}, status: 200,
			checks: []check{{"", "push_events", "false"}, {"", "url", "https://example.com/z"}},
		},
		{
			name: "a blank required title is missing", method: "POST", path: "/projects/{pid}/issues",
			params: map[string]any{"title": " ", "description": "d"}, status: 400, message: `400 (Bad request) \"title\" not given`,
		},
		{
			name: "a null required title is missing", method: "POST", path: "/projects/{pid}/milestones",
			params: map[string]any{"title": null{}}, status: 400, message: `400 (Bad request) \"title\" not given`,
		},
		{
			name: "a blank optional value on create is absent", method: "POST", path: "/projects/{pid}/issues",
			params: map[string]any{"title": "New", "description": "", "assignee_id": null{}}, status: 201,
			checks: []check{{"/projects/{pid}/issues/{new}", "description", nil}, {"/projects/{pid}/issues/{new}", "assignee", nil},
				{"/projects/{pid}/issues/{new}", "labels", []any{}}},
		},
	} {
		for _, how := range encodings {
			if tc.only != "" && how != tc.only {
				continue
			}
			w := newWorld(t)
			repl := strings.NewReplacer("{pid}", w.p(), "{issue}", fmt.Sprint(w.issue), "{mr}", fmt.Sprint(w.mr),
				"{milestone}", fmt.Sprint(w.milestone), "{hook}", fmt.Sprint(w.hook))
			path := "/api/v3" + repl.Replace(tc.path)
			admin := http.Header{"Private-Token": {w.s.AdminToken}}
			if tc.setup != nil {
				body, ctype := encodeBody(t, "form", tc.setup)
				status, _, got := do(t, w.s, "PUT", path, http.Header{"Private-Token": admin["Private-Token"], "Content-Type": {ctype}}, body)
				require.Equal(t, http.StatusOK, status, got)
			}
			body, ctype := encodeLenient(t, how, tc.params)
			status, _, got := do(t, w.s, tc.method, path, http.Header{"Private-Token": admin["Private-Token"], "Content-Type": {ctype}}, body)
			require.Equal(t, tc.status, status, "%s, %s: %s", tc.name, how, got)
			if tc.message != "" {
				assert.Contains(t, got, tc.message, "%s, %s", tc.name, how)
			}
			var created struct{ ID int }
			if status == http.StatusCreated {
				require.NoError(t, json.Unmarshal([]byte(got), &created))
			}
			for _, c := range tc.checks {
				readPath := path
				if c.path != "" {
					readPath = "/api/v3" + strings.ReplaceAll(repl.Replace(c.path), "{new}", fmt.Sprint(created.ID))
				}
				assert.Equal(t, c.want, w.get(t, readPath)[c.key], "%s, %s: %s", tc.name, how, c.key)
			}
		}
	}
}

// TestBodyTokenOnUnroutedPath: a token sent in the body is read on a path
// with no route for the method, so the caller learns 405, not 401.
func TestBodyTokenOnUnroutedPath(t *testing.T) {
	w := newWorld(t)
	for _, tc := range []struct {
		method, path string
		token        string
		status       int
	}{
		{"PATCH", "/api/v3/projects/{pid}", "ADMIN", http.StatusMethodNotAllowed},
		{"POST", "/api/v3/projects/{pid}/issues/{issue}", "ADMIN", http.StatusMethodNotAllowed},
		{"POST", "/api/v3/nowhere", "ADMIN", http.StatusNotFound},
		{"PATCH", "/api/v3/projects/{pid}", "wrong", http.StatusUnauthorized},
		{"PATCH", "/api/v3/projects/{pid}", "", http.StatusUnauthorized},
	} {
		path := strings.NewReplacer("{pid}", w.p(), "{issue}", fmt.Sprint(w.issue)).Replace(tc.path)
		token := tc.token
		if token == "ADMIN" {
			token = w.s.AdminToken
		}
		for _, how := range encodings {
			params := map[string]any{"title": "x"}
			if token != "" {
				params["private_token"] = token
			}
			body, ctype := encodeBody(t, how, params)
			status, _, got := do(t, w.s, tc.method, path, http.Header{"Content-Type": {ctype}}, body)
			assert.Equal(t, tc.status, status, "%s %s (%s) as %s: %s", tc.method, path, tc.token, how, got)
			assert.NotContains(t, got, w.s.AdminToken)
		}
	}
}

// TestDeprecatedMergeRequestRoutes: every merge request route under the
// singular /merge_request/{mr_id} answers as the plural one does, on
// identical servers, in every body encoding.
func TestDeprecatedMergeRequestRoutes(t *testing.T) {
	for _, tc := range []struct {
		method, path string // relative to the merge request
		params       map[string]any
		status       int
		shows        string
	}{
		{"GET", "", nil, 200, `"title":"Feature"`},
		{"PUT", "", map[string]any{"title": "Renamed", "labels": "a,b"}, 200, `"labels":["a","b"]`},
		{"GET", "/commits", nil, 200, `"title"`},
		{"GET", "/changes", nil, 200, `"changes"`},
		{"GET", "/closes_issues", nil, 200, `[]`},
		{"PUT", "/merge", map[string]any{"merge_commit_message": "m"}, 200, `"state":"merged"`},
		{"PUT", "/cancel_merge_when_build_succeeds", nil, 406, ``},
		{"POST", "/cancel_merge_when_build_succeeds", nil, 406, ``},
		{"POST", "/subscription", nil, 304, ``},
		{"DELETE", "/subscription", nil, 200, `"subscribed":false`},
		{"GET", "/comments", nil, 200, `[{"author":{`},
		{"POST", "/comments", map[string]any{"note": "Looks good"}, 201, `"note":"Looks good"`},
		{"POST", "/comments", map[string]any{"note": " "}, 400, `400 (Bad request) \"note\" not given`},
		{"POST", "/comments", map[string]any{"body": "wrong name"}, 400, `\"note\" not given`},
	} {
		for _, how := range encodings {
			var answers []string
			for _, kind := range []string{"merge_requests", "merge_request"} {
				w := newWorld(t)
				w.s.AddNote(w.pid, "MergeRequest", w.mr, w.bob.ID, "First look")
				path := fmt.Sprintf("/api/v3/projects/%d/%s/%d%s", w.pid, kind, w.mr, tc.path)
				body, ctype := encodeBody(t, how, tc.params)
				status, _, got := do(t, w.s, tc.method, path,
					http.Header{"Private-Token": {w.s.AdminToken}, "Content-Type": {ctype}}, body)
				assert.Equal(t, tc.status, status, "%s %s as %s: %s", tc.method, path, how, got)
				assert.Contains(t, got, tc.shows, "%s %s as %s", tc.method, path, how)
				got = strings.ReplaceAll(got, w.s.URL, "URL")
				answers = append(answers, timeRE.ReplaceAllString(hexRE.ReplaceAllString(got, "HEX"), "TIME"))
			}
			assert.Equal(t, answers[0], answers[1], "%s %s as %s: singular differs", tc.method, tc.path, how)
		}
	}
}

// TestMergeRequestComments: the comments routes show a merge request's
// notes as {note, author}, and a comment posted there is a note.
func TestMergeRequestComments(t *testing.T) {
	w := newWorld(t)
	w.s.AddNote(w.pid, "MergeRequest", w.mr, w.bob.ID, "First look")
	base := fmt.Sprintf("/api/v3/projects/%d/merge_requests/%d", w.pid, w.mr)
	admin := http.Header{"Private-Token": {w.s.AdminToken}, "Content-Type": {"application/json"}}
	status, _, got := do(t, w.s, "POST", base+"/comments", admin, strings.NewReader(`{"note":"Ship it"}`))
	require.Equal(t, http.StatusCreated, status, got)
	var one map[string]any
	require.NoError(t, json.Unmarshal([]byte(got), &one))
	assert.Equal(t, "Ship it", one["note"])
	assert.Equal(t, "root", one["author"].(map[string]any)["username"])
	assert.Len(t, one, 2, "only note and author")

	status, hdr, got := do(t, w.s, "GET", base+"/comments?per_page=1&page=2", admin, nil)
	require.Equal(t, http.StatusOK, status, got)
	assert.Equal(t, "2", hdr.Get("X-Total"), "paginated")
	assert.JSONEq(t, `[{"note":"Ship it","author":`+mustJSON(t, one["author"])+`}]`, got)

	status, _, got = do(t, w.s, "GET", base+"/notes", admin, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, got, `"body":"Ship it"`, "a comment is a note")
}
