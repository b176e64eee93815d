package collabtest

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runnerCall sends one raw runner-API request and returns status, headers and body.
func runnerCall(t *testing.T, s *Server, method, path string, body io.Reader, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+"/ci/api/v1"+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func runnerForm(v url.Values) (io.Reader, string, string) {
	return strings.NewReader(v.Encode()), "Content-Type", "application/x-www-form-urlencoded"
}

func runnerExpect(t *testing.T, gotStatus int, gotBody string, wantStatus int, wantBody string) {
	t.Helper()
	if gotStatus != wantStatus {
		t.Fatalf("status %d, want %d (body %s)", gotStatus, wantStatus, gotBody)
	}
	if wantBody != "" && strings.TrimSpace(gotBody) != wantBody {
		t.Fatalf("body %s, want %s", gotBody, wantBody)
	}
}

func newRunnerFake(t *testing.T) *Server {
	t.Helper()
	s := mustServer(t)
	t.Cleanup(func() {
		if s.Panics() != 0 {
			t.Errorf("%d handler panics", s.Panics())
		}
		s.Close()
	})
	return s
}

func runnerRegister(t *testing.T, s *Server, v url.Values) (int, map[string]any) {
	t.Helper()
	body, k, ct := runnerForm(v)
	status, _, out := runnerCall(t, s, "POST", "/builds/register", body, k, ct)
	var m map[string]any
	if status == http.StatusCreated {
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
	}
	return status, m
}

func TestRegisterBuild(t *testing.T) {
	s := newRunnerFake(t)
	pid := s.AddProject(s.AdminID, "Widget Factory", 0)
	build1 := s.AddBuild(pid, BuildSpec{Name: "compile", Stage: "build", Status: "success", Artifacts: []byte("zip")})
	build2 := s.AddBuild(pid, BuildSpec{Name: "rspec", Stage: "test", Commands: "a\nb", Tag: true, Ref: "v1"})
	s.mu.Lock()
	s.builds[build2].commitID = s.builds[build1].commitID
	s.mu.Unlock()
	s.SetBuildVariables(build2, map[string]string{"B": "2", "A": "1"}, true)
	rid, rtok := s.AddRunner("shared")

	status, _ := runnerRegister(t, s, url.Values{"token": {"nope"}})
	runnerExpect(t, status, "", http.StatusForbidden, "")
	s.SetRunnerActive(rid, false)
	status, _ = runnerRegister(t, s, url.Values{"token": {rtok}})
	runnerExpect(t, status, "", http.StatusNotFound, "") // paused: nothing to do
	s.SetRunnerActive(rid, true)

	status, m := runnerRegister(t, s, url.Values{"token": {rtok}, "info[name]": {"r1"}, "info[version]": {"1.2"},
		"info[revision]": {"abc"}, "info[platform]": {"linux"}, "info[architecture]": {"arm64"}})
	runnerExpect(t, status, "", http.StatusCreated, "")
	tok := s.ProjectRunnersToken(pid)
	for k, want := range map[string]any{
		"id": float64(build2), "name": "rspec", "stage": "test", "status": "running", "ref": "v1", "tag": true,
		"token": tok, "project_id": float64(pid), "project_name": "Widget Factory", "commands": "a\nb",
		"allow_git_fetch": true, "timeout": float64(3600), "before_sha": strings.Repeat("0", 40),
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	if !strings.Contains(m["repo_url"].(string), "gitlab-ci-token:"+tok+"@") {
		t.Errorf("repo_url %v", m["repo_url"])
	}
	if _, ok := m["options"].(map[string]any); !ok {
		t.Errorf("options %v", m["options"])
	}
	vars := m["variables"].([]any)
	last := vars[len(vars)-2:]
	if last[0].(map[string]any)["key"] != "A" || last[1].(map[string]any)["key"] != "B" {
		t.Errorf("custom variables %v", last)
	}
	deps := m["depends_on_builds"].([]any)
	if len(deps) != 1 || deps[0].(map[string]any)["id"] != float64(build1) || deps[0].(map[string]any)["artifacts_file"] == nil {
		t.Errorf("depends_on_builds %v", deps)
	}
	s.mu.Lock()
	r, b := s.runners[rid], s.builds[build2]
	if r.name != "r1" || r.version != "1.2" || r.architecture != "arm64" || b.runnerID != rid || b.startedAt.IsZero() {
		t.Errorf("runner %+v build %+v", r, b)
	}
	s.mu.Unlock()

	status, _ = runnerRegister(t, s, url.Values{"token": {rtok}})
	runnerExpect(t, status, "", http.StatusNotFound, "")
}

func TestUpdateBuildRules(t *testing.T) {
	s := newRunnerFake(t)
	pid := s.AddProject(s.AdminID, "app", 0)
	bid := s.AddBuild(pid, BuildSpec{})
	_, rtok := s.AddRunner("r1")
	_, other := s.AddRunner("r2")
	put := func(v url.Values) (int, string) {
		body, k, ct := runnerForm(v)
		status, _, out := runnerCall(t, s, "PUT", "/builds/"+runnerItoa(bid), body, k, ct)
		return status, out
	}
	status, out := put(url.Values{"token": {rtok}, "state": {"running"}})
	runnerExpect(t, status, out, http.StatusNotFound, `{"message":"404 Not found"}`) // still pending
	runnerRegister(t, s, url.Values{"token": {rtok}})

	status, out = put(url.Values{"token": {"bad"}})
	runnerExpect(t, status, out, http.StatusForbidden, "")
	status, out = put(url.Values{"token": {other}, "state": {"success"}})
	runnerExpect(t, status, out, http.StatusNotFound, "")
	status, out = put(url.Values{"token": {rtok}, "state": {"exploded"}})
	runnerExpect(t, status, out, http.StatusBadRequest, `{"message":{"state":["is invalid"]}}`)
	status, out = put(url.Values{"token": {rtok}, "state": {"running"}, "trace": {"full log"}})
	runnerExpect(t, status, out, http.StatusOK, "")
	if got := string(s.BuildTrace(bid)); got != "full log" {
		t.Errorf("trace %q", got)
	}
	s.mu.Lock()
	s.builds[bid].erased = true
	s.mu.Unlock()
	status, out = put(url.Values{"token": {rtok}, "state": {"failed"}})
	runnerExpect(t, status, out, http.StatusForbidden, "")
	s.mu.Lock()
	s.builds[bid].erased = false
	s.mu.Unlock()
	status, out = put(url.Values{"token": {rtok}, "state": {"failed"}})
	runnerExpect(t, status, out, http.StatusOK, "")
	if st, _ := s.BuildStatus(bid); st != "failed" {
		t.Errorf("status %s", st)
	}
	status, out = put(url.Values{"token": {rtok}, "state": {"success"}})
	runnerExpect(t, status, out, http.StatusNotFound, "")
	status, _, _ = runnerCall(t, s, "PUT", "/builds/abc", nil)
	runnerExpect(t, status, "", http.StatusForbidden, "")
}

func TestAppendTraceRules(t *testing.T) {
	s := newRunnerFake(t)
	pid := s.AddProject(s.AdminID, "app", 0)
	bid := s.AddBuild(pid, BuildSpec{})
	_, rtok := s.AddRunner("r1")
	tok := s.ProjectRunnersToken(pid)
	patch := func(part, cr string, header ...string) (int, http.Header, string) {
		h := append([]string{"Content-Type", "text/plain"}, header...)
		if cr != "" {
			h = append(h, "Content-Range", cr)
		}
		return runnerCall(t, s, "PATCH", "/builds/"+runnerItoa(bid)+"/trace.txt", strings.NewReader(part), h...)
	}
	runnerRegister(t, s, url.Values{"token": {rtok}})

	status, _, out := patch("x", "0-0", "BUILD-TOKEN", "bad")
	runnerExpect(t, status, out, http.StatusForbidden, `{"message":"403 Forbidden"}`)
	status, _, out = patch("x", "", "BUILD-TOKEN", tok)
	runnerExpect(t, status, out, http.StatusBadRequest, `{"message":"400 (Bad request) \"Content-Range\" not given"}`)
	status, _, out = patch("x", "zero", "BUILD-TOKEN", tok)
	runnerExpect(t, status, out, http.StatusBadRequest, "")
	status, h, out := patch("hello ", "0-5", "BUILD-TOKEN", tok)
	runnerExpect(t, status, out, http.StatusAccepted, "")
	if h.Get("Build-Status") != "running" || h.Get("Range") != "0-6" {
		t.Errorf("headers %v", h)
	}
	status, h, out = patch("again", "2-6", "BUILD-TOKEN", tok)
	runnerExpect(t, status, out, http.StatusRequestedRangeNotSatisfiable, `{"error":"416 Range Not Satisfiable"}`)
	if h.Get("Range") != "0-6" {
		t.Errorf("416 Range %q", h.Get("Range"))
	}
	// The token parameter and a "bytes " unit are accepted too.
	status, _, out = runnerCall(t, s, "PATCH", "/builds/"+runnerItoa(bid)+"/trace.txt?token="+tok, strings.NewReader("world"),
		"Content-Range", "bytes 6-10", "Content-Type", "text/plain")
	runnerExpect(t, status, out, http.StatusAccepted, "")
	if got := string(s.BuildTrace(bid)); got != "hello world" {
		t.Errorf("trace %q", got)
	}
	s.SetBuildStatus(bid, "canceled")
	status, h, out = patch("!", "11-11", "BUILD-TOKEN", tok)
	runnerExpect(t, status, out, http.StatusAccepted, "")
	if h.Get("Build-Status") != "canceled" {
		t.Errorf("Build-Status %q", h.Get("Build-Status"))
	}
	s.mu.Lock()
	s.builds[bid].erased = true
	s.mu.Unlock()
	status, _, out = patch("!", "12-12", "BUILD-TOKEN", tok)
	runnerExpect(t, status, out, http.StatusForbidden, "")
	status, _, out = runnerCall(t, s, "PATCH", "/builds/999/trace.txt", strings.NewReader("x"), "Content-Range", "0-0", "BUILD-TOKEN", tok)
	runnerExpect(t, status, out, http.StatusNotFound, "")
	status, _, out = runnerCall(t, s, "PATCH", "/builds/"+runnerItoa(bid)+"/trace.txt", strings.NewReader(strings.Repeat("x", maxTracePart+1)),
		"Content-Range", "0-0", "BUILD-TOKEN", tok)
	runnerExpect(t, status, out, http.StatusRequestEntityTooLarge, "")
}

func runnerMultipart(t *testing.T, field, filename string, data []byte) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("other", "value")
	if field != "" {
		fw, err := mw.CreateFormFile(field, filename)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(data)
	}
	_ = mw.Close()
	return &buf, mw.FormDataContentType()
}

func TestArtifactsRules(t *testing.T) {
	s := newRunnerFake(t)
	pid := s.AddProject(s.AdminID, "app", 0)
	bid := s.AddBuild(pid, BuildSpec{})
	_, rtok := s.AddRunner("r1")
	tok := s.ProjectRunnersToken(pid)
	path := "/builds/" + runnerItoa(bid) + "/artifacts"
	upload := func(query, token, field, name string, data []byte) (int, string) {
		body, ct := runnerMultipart(t, field, name, data)
		status, _, out := runnerCall(t, s, "POST", path+query, body, "Content-Type", ct, "BUILD-TOKEN", token)
		return status, out
	}
	status, out := upload("", tok, "file", "a.zip", []byte("zip"))
	runnerExpect(t, status, out, http.StatusForbidden, "") // not running yet
	runnerRegister(t, s, url.Values{"token": {rtok}})
	status, out = upload("", "bad", "file", "a.zip", []byte("zip"))
	runnerExpect(t, status, out, http.StatusForbidden, "")
	status, out = upload("", tok, "", "", nil)
	runnerExpect(t, status, out, http.StatusBadRequest, `{"message":"400 (Bad request) \"file\" not given"}`)
	status, _, out = runnerCall(t, s, "POST", path, strings.NewReader("raw"), "Content-Type", "application/zip", "BUILD-TOKEN", tok)
	runnerExpect(t, status, out, http.StatusBadRequest, "")
	status, out = upload("?expire_in=soon", tok, "file", "a.zip", []byte("zip"))
	runnerExpect(t, status, out, http.StatusBadRequest, `{"message":{"expire_in":["is invalid"]}}`)
	s.SetMaxArtifactsSize(1 << 20)
	status, out = upload("", tok, "file", "a.zip", bytes.Repeat([]byte("z"), 1<<20+1))
	runnerExpect(t, status, out, http.StatusRequestEntityTooLarge, `{"message":"413 Request Entity Too Large"}`)

	status, out = upload("?expire_in=7+days", tok, "file", "", []byte("zipdata"))
	runnerExpect(t, status, out, http.StatusCreated, "")
	var rec map[string]any
	_ = json.Unmarshal([]byte(out), &rec)
	if af := rec["artifacts_file"].(map[string]any); af["filename"] != "artifacts.zip" || af["size"] != float64(7) {
		t.Errorf("artifacts_file %v", af)
	}
	s.mu.Lock()
	exp := s.builds[bid].artifactsExpireAt
	s.mu.Unlock()
	if d := time.Until(exp); d < 6*24*time.Hour || d > 8*24*time.Hour {
		t.Errorf("expires in %v", d)
	}

	status, h, body := runnerCall(t, s, "GET", path, nil, "BUILD-TOKEN", tok)
	runnerExpect(t, status, body, http.StatusOK, "zipdata")
	if h.Get("Content-Disposition") != "attachment; filename=artifacts.zip" || h.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("headers %v", h)
	}
	status, _, _ = runnerCall(t, s, "GET", path+"?token="+tok, nil)
	runnerExpect(t, status, "", http.StatusOK, "")
	status, _, _ = runnerCall(t, s, "GET", path, nil, "BUILD-TOKEN", "bad")
	runnerExpect(t, status, "", http.StatusForbidden, "")
	status, _, _ = runnerCall(t, s, "DELETE", path, nil, "BUILD-TOKEN", "bad")
	runnerExpect(t, status, "", http.StatusForbidden, "")
	status, _, _ = runnerCall(t, s, "DELETE", path, nil, "BUILD-TOKEN", tok)
	runnerExpect(t, status, "", http.StatusOK, "")
	status, _, _ = runnerCall(t, s, "DELETE", path, nil, "BUILD-TOKEN", tok)
	runnerExpect(t, status, "", http.StatusOK, "")
	status, _, _ = runnerCall(t, s, "GET", path, nil, "BUILD-TOKEN", tok)
	runnerExpect(t, status, "", http.StatusNotFound, "")
	status, _, _ = runnerCall(t, s, "GET", "/builds/999/artifacts", nil, "BUILD-TOKEN", tok)
	runnerExpect(t, status, "", http.StatusNotFound, "")
	if name, data := s.BuildArtifacts(bid); name != "" || data != nil {
		t.Errorf("artifacts left: %q", name)
	}
	if s.BuildTrace(999) != nil {
		t.Error("trace of a missing build")
	}
	if st, r := s.BuildStatus(999); st != "" || r != 0 {
		t.Error("status of a missing build")
	}
	s.SetBuildVariables(999, map[string]string{"A": "1"}, true) // no panic
}

func TestParseExpireIn(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"7 days": 7 * 24 * time.Hour, "1 week": 7 * 24 * time.Hour, "3 hours": 3 * time.Hour, "30 mins": 30 * time.Minute,
		"3600": time.Hour, "2d": 48 * time.Hour, "1 Month": 30 * 24 * time.Hour, "1 year": 365 * 24 * time.Hour,
	} {
		got, err := parseExpireIn(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "soon", "7 fortnights", "-1 day", "0 days", "1 2 3", "999999999 years", "d7"} {
		if _, err := parseExpireIn(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestMaxArtifactsSetting(t *testing.T) {
	s := newRunnerFake(t)
	for v, want := range map[any]int64{nil: 100 << 20, 5: 5 << 20, int64(6): 6 << 20, float64(7): 7 << 20, "8": 8 << 20, "x": 100 << 20, 0: 100 << 20} {
		s.mu.Lock()
		s.settings.values["max_artifacts_size"] = v
		got := s.maxArtifactsBytes()
		s.mu.Unlock()
		if got != want {
			t.Errorf("%v: %d, want %d", v, got, want)
		}
	}
	if _, err := rangeStart("5"); err == nil {
		t.Error("a range without a dash")
	}
}

func runnerItoa(n int) string { return strconv.Itoa(n) }

// bodyEncodings are the three ways a client sends parameters.
var bodyEncodings = []string{"form", "multipart", "json"}

// runnerSend sends params in the body, encoded as how, to a runner-API path.
func runnerSend(t *testing.T, s *Server, method, path, how string, params map[string]any) (int, string) {
	t.Helper()
	body, ct := encodeBody(t, how, params)
	status, _, out := runnerCall(t, s, method, path, body, "Content-Type", ct)
	return status, out
}

// TestPausedRunnerRules: a paused runner is handed nothing (404, which the
// runner reads as "nothing to do", not 403, which marks it unhealthy), yet
// reports on its builds; PUT /builds/-1 tells alive (404) from removed (403).
func TestPausedRunnerRules(t *testing.T) {
	type world struct {
		running, pending    int
		token, removedToken string
	}
	cases := []struct {
		name, method, path string // path: {running} and {pending} are build ids
		params             func(w *world) map[string]any
		status             int
		runningState       string // the running build's status afterwards
	}{
		{"register", "POST", "/builds/register", func(w *world) map[string]any { return map[string]any{"token": w.token} }, 404, "running"},
		{"register.json", "POST", "/builds/register.json", func(w *world) map[string]any { return map[string]any{"token": w.token} }, 404, "running"},
		{"register unknown", "POST", "/builds/register", func(*world) map[string]any { return map[string]any{"token": "nope"} }, 403, "running"},
		{"register removed", "POST", "/builds/register", func(w *world) map[string]any { return map[string]any{"token": w.removedToken} }, 403, "running"},
		{"update", "PUT", "/builds/{running}", func(w *world) map[string]any {
			return map[string]any{"token": w.token, "state": "success", "trace": "done\n"}
		}, 200, "success"},
		{"update.json", "PUT", "/builds/{running}.json", func(w *world) map[string]any {
			return map[string]any{"token": w.token, "state": "failed"}
		}, 200, "failed"},
		{"update pending", "PUT", "/builds/{pending}", func(w *world) map[string]any {
			return map[string]any{"token": w.token, "state": "success"}
		}, 404, "running"},
		{"alive", "PUT", "/builds/-1", func(w *world) map[string]any { return map[string]any{"token": w.token} }, 404, "running"},
		{"removed", "PUT", "/builds/-1", func(w *world) map[string]any { return map[string]any{"token": w.removedToken} }, 403, "running"},
		{"unknown", "PUT", "/builds/-1", func(*world) map[string]any { return map[string]any{"token": "nope"} }, 403, "running"},
	}
	for _, how := range bodyEncodings {
		for _, tc := range cases {
			t.Run(how+"/"+tc.name, func(t *testing.T) {
				s := newRunnerFake(t)
				w := &world{}
				pid := s.AddProject(s.AdminID, "app", 0)
				w.running = s.AddBuild(pid, BuildSpec{})
				rid, token := s.AddRunner("paused")
				w.token = token
				runnerRegister(t, s, url.Values{"token": {w.token}})
				w.pending = s.AddBuild(pid, BuildSpec{})
				var removed int
				removed, w.removedToken = s.AddRunner("removed")
				s.mu.Lock()
				delete(s.runners, removed)
				s.mu.Unlock()
				s.SetRunnerActive(rid, false)

				path := strings.NewReplacer("{running}", runnerItoa(w.running), "{pending}", runnerItoa(w.pending)).Replace(tc.path)
				status, out := runnerSend(t, s, tc.method, path, how, tc.params(w))
				runnerExpect(t, status, out, tc.status, "")
				if st, _ := s.BuildStatus(w.running); st != tc.runningState {
					t.Errorf("running build is %s, want %s", st, tc.runningState)
				}
				if st, r := s.BuildStatus(w.pending); st != "pending" || r != 0 {
					t.Errorf("pending build is %s, runner %d", st, r)
				}
			})
		}
	}
}

// TestTraceAppendInAnyState: appends are kept whatever the build's state,
// with Build-Status naming it; only a missing build, a bad token and an
// erased build are refused.
func TestTraceAppendInAnyState(t *testing.T) {
	cases := []struct {
		name, status string // status the build is in
		erased       bool
		build        string // "" for the build, or another path id
		token        string // "" for the build token
		want         int
	}{
		{name: "pending", status: "pending", want: 202},
		{name: "running", status: "running", want: 202},
		{name: "success", status: "success", want: 202},
		{name: "failed", status: "failed", want: 202},
		{name: "canceled", status: "canceled", want: 202},
		{name: "skipped", status: "skipped", want: 202},
		{name: "erased", status: "success", erased: true, want: 403},
		{name: "bad token", status: "running", token: "bad", want: 403},
		{name: "missing build", status: "running", build: "999999", want: 404},
		{name: "not a build id", status: "running", build: "-1", want: 404},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newRunnerFake(t)
			pid := s.AddProject(s.AdminID, "app", 0)
			bid := s.AddBuild(pid, BuildSpec{Status: tc.status, Trace: "start\n"})
			wantTrace := "start\n"
			if tc.erased {
				s.mu.Lock()
				s.builds[bid].erased, s.builds[bid].trace = true, nil
				s.mu.Unlock()
				wantTrace = ""
			}
			id := cmp.Or(tc.build, runnerItoa(bid))
			tok := cmp.Or(tc.token, s.ProjectRunnersToken(pid))
			status, h, out := runnerCall(t, s, "PATCH", "/builds/"+id+"/trace.txt", strings.NewReader("late\n"),
				"BUILD-TOKEN", tok, "Content-Range", "6-10", "Content-Type", "text/plain")
			runnerExpect(t, status, out, tc.want, "")
			if tc.want == http.StatusAccepted {
				wantTrace += "late\n"
				if h.Get("Build-Status") != tc.status || h.Get("Range") != "0-11" {
					t.Errorf("Build-Status %q, Range %q", h.Get("Build-Status"), h.Get("Range"))
				}
			}
			if got := string(s.BuildTrace(bid)); got != wantTrace {
				t.Errorf("trace %q, want %q", got, wantTrace)
			}
			if st, _ := s.BuildStatus(bid); st != tc.status {
				t.Errorf("status %s, want %s", st, tc.status)
			}
		})
	}
}

// TestPredefinedVariables: only the variables deployed servers send, in
// their order; the runner sets every other CI_* variable itself.
func TestPredefinedVariables(t *testing.T) {
	type v = buildVariable
	cases := []struct {
		name    string
		spec    BuildSpec
		yaml    map[string]string
		secret  map[string]string
		trigger map[string]string
		want    []buildVariable
	}{
		{name: "branch", spec: BuildSpec{Name: "rspec", Stage: "test"},
			want: []v{{"CI_BUILD_NAME", "rspec", true}, {"CI_BUILD_STAGE", "test", true}}},
		{name: "tag", spec: BuildSpec{Name: "release", Stage: "deploy", Ref: "v1.0", Tag: true},
			want: []v{{"CI_BUILD_TAG", "v1.0", true}, {"CI_BUILD_NAME", "release", true}, {"CI_BUILD_STAGE", "deploy", true}}},
		{name: "every kind", spec: BuildSpec{Name: "e2e", Stage: "test"},
			yaml: map[string]string{"RAILS_ENV": "test", "DEBUG": "1"}, secret: map[string]string{"DB_PASSWORD": "hunter2"},
			trigger: map[string]string{"DEPLOY_TO": "staging"},
			want: []v{{"CI_BUILD_NAME", "e2e", true}, {"CI_BUILD_STAGE", "test", true}, {"CI_BUILD_TRIGGERED", "true", true},
				{"DEBUG", "1", true}, {"RAILS_ENV", "test", true}, {"DB_PASSWORD", "hunter2", false}, {"DEPLOY_TO", "staging", false}}},
		{name: "triggered without variables", spec: BuildSpec{Name: "a", Stage: "b"}, trigger: map[string]string{},
			want: []v{{"CI_BUILD_NAME", "a", true}, {"CI_BUILD_STAGE", "b", true}, {"CI_BUILD_TRIGGERED", "true", true}}},
	}
	for _, how := range bodyEncodings {
		for _, tc := range cases {
			t.Run(how+"/"+tc.name, func(t *testing.T) {
				s := newRunnerFake(t)
				pid := s.AddProject(s.AdminID, "app", 0)
				bid := s.AddBuild(pid, tc.spec)
				// Secret first: the order of the calls does not matter.
				s.SetBuildVariables(bid, tc.secret, false)
				s.SetBuildVariables(bid, tc.yaml, true)
				if tc.trigger != nil {
					s.SetBuildTrigger(bid, tc.trigger)
				}
				_, tok := s.AddRunner("r")
				status, out := runnerSend(t, s, "POST", "/builds/register.json", how, map[string]any{"token": tok})
				runnerExpect(t, status, out, http.StatusCreated, "")
				var got struct{ Variables []buildVariable }
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Variables, tc.want) {
					t.Errorf("variables\n got %v\nwant %v", got.Variables, tc.want)
				}
			})
		}
	}
}

// TestRegisterRunnerRules: POST /runners/register and DELETE
// /runners/delete, in every body encoding.
func TestRegisterRunnerRules(t *testing.T) {
	info := map[string]any{"name": "gitlab-ci-multi-runner", "version": "1.3.0", "revision": "f9b34378",
		"platform": "linux", "architecture": "amd64", "features": map[string]any{"variables": true}}
	cases := []struct {
		name   string
		params map[string]any // "SHARED" and "PROJECT" stand for the registration tokens
		status int
		want   *Runner // the stored runner, but for ID and ProjectID
	}{
		{"shared", map[string]any{"token": "SHARED", "description": "ci-1", "tag_list": "docker, linux", "info": info}, 201,
			&Runner{Description: "ci-1", Active: true, Shared: true, Tags: []string{"docker", "linux"}, RunUntagged: true,
				Name: "gitlab-ci-multi-runner", Version: "1.3.0", Revision: "f9b34378", Platform: "linux", Architecture: "amd64"}},
		{"project", map[string]any{"token": "PROJECT", "description": "mine", "run_untagged": false, "locked": true,
			"tag_list": []any{"ruby"}}, 201,
			&Runner{Description: "mine", Active: true, Tags: []string{"ruby"}, Locked: true}},
		{"blank values are left out", map[string]any{"token": "SHARED", "description": "", "run_untagged": "", "locked": "", "tag_list": ""}, 201,
			&Runner{Active: true, Shared: true, RunUntagged: true}},
		{"unknown token", map[string]any{"token": "nope", "description": "x"}, 403, nil},
		{"missing token", map[string]any{"description": "x"}, 400, nil},
		{"blank token", map[string]any{"token": " "}, 400, nil},
		{"cannot be saved", map[string]any{"token": "SHARED", "run_untagged": false}, 404, nil},
	}
	for _, how := range bodyEncodings {
		for _, tc := range cases {
			t.Run(how+"/"+tc.name, func(t *testing.T) {
				s := newRunnerFake(t)
				pid := s.AddProject(s.AdminID, "app", 0)
				params := map[string]any{}
				for k, v := range tc.params {
					params[k] = v
				}
				switch params["token"] {
				case "SHARED":
					params["token"] = s.RunnersRegistrationToken()
				case "PROJECT":
					params["token"] = s.ProjectRunnersToken(pid)
				}
				status, out := runnerSend(t, s, "POST", "/runners/register.json", how, params)
				runnerExpect(t, status, out, tc.status, "")
				rs := s.Runners()
				if tc.want == nil {
					if len(rs) != 0 {
						t.Fatalf("stored %+v", rs)
					}
					return
				}
				var reply struct {
					ID    int
					Token string
				}
				if err := json.Unmarshal([]byte(out), &reply); err != nil || reply.Token == "" {
					t.Fatalf("reply %s: %v", out, err)
				}
				want := *tc.want
				want.ID = reply.ID
				if !want.Shared {
					want.ProjectID = pid
				}
				if len(rs) != 1 || !reflect.DeepEqual(rs[0], want) {
					t.Fatalf("stored\n got %+v\nwant %+v", rs, want)
				}

				// The new token works, and deleting it removes the runner.
				status, out = runnerSend(t, s, "PUT", "/builds/-1", how, map[string]any{"token": reply.Token})
				runnerExpect(t, status, out, http.StatusNotFound, "")
				for _, del := range []struct {
					params       map[string]any
					status, left int
				}{
					{map[string]any{"token": "nope"}, 403, 1},
					{map[string]any{}, 400, 1},
					{map[string]any{"token": reply.Token}, 200, 0},
					{map[string]any{"token": reply.Token}, 403, 0},
				} {
					status, out = runnerSend(t, s, "DELETE", "/runners/delete", how, del.params)
					runnerExpect(t, status, out, del.status, "")
					if left := len(s.Runners()); left != del.left {
						t.Fatalf("%d runners left, want %d", left, del.left)
					}
				}
				status, out = runnerSend(t, s, "PUT", "/builds/-1", how, map[string]any{"token": reply.Token})
				runnerExpect(t, status, out, http.StatusForbidden, "")
			})
		}
	}
}

// TestRunnerPicksBuilds: builds go only to runners that may run them.
func TestRunnerPicksBuilds(t *testing.T) {
	cases := []struct {
		name       string
		runner     map[string]any // register parameters; "PROJECT" or "OTHER" for a project's token
		buildTags  []string
		sharedOff  bool
		wantPicked bool
	}{
		{"untagged build, untagged runner", map[string]any{}, nil, false, true},
		{"untagged build, tagged-only runner", map[string]any{"tag_list": "docker", "run_untagged": false}, nil, false, false},
		{"tags fit", map[string]any{"tag_list": "docker,linux"}, []string{"linux"}, false, true},
		{"tag missing", map[string]any{"tag_list": "docker"}, []string{"docker", "windows"}, false, false},
		{"tagged build, untagged runner", map[string]any{}, []string{"docker"}, false, false},
		{"shared runners disabled", map[string]any{}, nil, true, false},
		{"project runner, shared runners disabled", map[string]any{"token": "PROJECT"}, nil, true, true},
		{"another project's runner", map[string]any{"token": "OTHER"}, nil, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newRunnerFake(t)
			pid := s.AddProject(s.AdminID, "app", 0)
			other := s.AddProject(s.AdminID, "other", 0)
			s.mu.Lock()
			s.projects[pid].sharedRunnersEnabled = !tc.sharedOff
			s.mu.Unlock()
			bid := s.AddBuild(pid, BuildSpec{Tags: tc.buildTags})
			params := map[string]any{"token": s.RunnersRegistrationToken()}
			for k, v := range tc.runner {
				params[k] = v
			}
			switch params["token"] {
			case "PROJECT":
				params["token"] = s.ProjectRunnersToken(pid)
			case "OTHER":
				params["token"] = s.ProjectRunnersToken(other)
			}
			status, out := runnerSend(t, s, "POST", "/runners/register", "json", params)
			runnerExpect(t, status, out, http.StatusCreated, "")
			var reg struct{ Token string }
			_ = json.Unmarshal([]byte(out), &reg)
			status, out = runnerSend(t, s, "POST", "/builds/register", "json", map[string]any{"token": reg.Token})
			st, _ := s.BuildStatus(bid)
			if picked := status == http.StatusCreated && st == "running"; picked != tc.wantPicked {
				t.Fatalf("picked %v (%d %s), want %v", picked, status, out, tc.wantPicked)
			}
			if !tc.wantPicked && (status != http.StatusNotFound || st != "pending") {
				t.Fatalf("status %d, build %s", status, st)
			}
		})
	}
}
