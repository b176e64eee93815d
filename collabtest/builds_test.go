package collabtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// buildsCall sends one consumer-API request and returns the status, headers
// and body.
func buildsCall(t *testing.T, s *Server, token, method, path string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+"/api/v3"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("PRIVATE-TOKEN", token)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

func buildsDecode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return v
}

func buildsExpect(t *testing.T, gotStatus, wantStatus int, body []byte) {
	t.Helper()
	if gotStatus != wantStatus {
		t.Fatalf("status %d, want %d; body %s", gotStatus, wantStatus, body)
	}
}

func newBuildsServer(t *testing.T) (*Server, int) {
	t.Helper()
	s := mustServer(t)
	t.Cleanup(func() {
		if s.Panics() != 0 {
			t.Errorf("%d handler panics", s.Panics())
		}
		s.Close()
	})
	return s, s.AddProject(s.AdminID, "demo", 0)
}

func TestBuildsScopeParsing(t *testing.T) {
	s, pid := newBuildsServer(t)
	ids := map[string]int{}
	for _, st := range []string{"pending", "running", "success", "failed", "canceled", "skipped"} {
		ids[st] = s.AddBuild(pid, BuildSpec{Status: st})
	}
	base := "/projects/" + strconv.Itoa(pid) + "/builds"
	for _, tc := range []struct {
		query  string
		status int
		want   []string
	}{
		{"", 200, []string{"skipped", "canceled", "failed", "success", "running", "pending"}},
		{"?scope=failed", 200, []string{"failed"}},
		{"?scope=", 200, []string{"skipped", "canceled", "failed", "success", "running", "pending"}},
		{"?scope%5B0%5D=pending&scope%5B1%5D=skipped", 200, []string{"skipped", "pending"}},
		{"?scope[1]=running&scope[0]=success&scope[10]=canceled", 200, []string{"canceled", "success", "running"}},
		{"?scope[a]=failed&scope[b]=running", 200, []string{"failed", "running"}},
		{"?scope[]=pending", 400, nil},
		{"?scope%5B%5D=pending&scope%5B%5D=running", 400, nil},
		{"?scope=created", 400, nil},
		{"?scope[0]=pending&scope[1]=PENDING", 400, nil},
		{"?scope=pending&scope[0]=running", 400, nil},
		{"?scope[0=pending", 400, nil},
	} {
		status, _, body := buildsCall(t, s, s.AdminToken, "GET", base+tc.query)
		if status != tc.status {
			t.Errorf("%s: status %d, want %d (%s)", tc.query, status, tc.status, body)
			continue
		}
		if status == 400 {
			msg := buildsDecode[map[string]string](t, body)["message"]
			if msg != "Scope contains invalid value(s)" {
				t.Errorf("%s: message %q", tc.query, msg)
			}
			continue
		}
		got := buildsDecode[[]map[string]any](t, body)
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d builds, want %d", tc.query, len(got), len(tc.want))
			continue
		}
		for i, st := range tc.want {
			if int(got[i]["id"].(float64)) != ids[st] || got[i]["status"] != st {
				t.Errorf("%s: item %d is %v, want %s build %d", tc.query, i, got[i]["status"], st, ids[st])
			}
		}
	}
}

func TestBuildsPaginationHeaders(t *testing.T) {
	s, pid := newBuildsServer(t)
	for i := 0; i < 5; i++ {
		s.AddBuild(pid, BuildSpec{})
	}
	status, h, body := buildsCall(t, s, s.AdminToken, "GET", "/projects/"+strconv.Itoa(pid)+"/builds?per_page=2&page=2&scope=pending")
	buildsExpect(t, status, 200, body)
	for k, want := range map[string]string{"X-Total": "5", "X-Total-Pages": "3", "X-Per-Page": "2", "X-Page": "2", "X-Next-Page": "3", "X-Prev-Page": "1"} {
		if got := h.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if link := h.Get("Link"); !strings.Contains(link, "scope=pending") || !strings.Contains(link, `rel="next"`) {
		t.Errorf("Link %q", link)
	}
}

func TestBuildsRecordAndDownloads(t *testing.T) {
	s, pid := newBuildsServer(t)
	cov := 75.25
	bid := s.AddBuild(pid, BuildSpec{Status: "success", Artifacts: []byte("zipbytes"), ArtifactsName: "out.zip", Trace: "hello\n", Coverage: &cov, Tag: true, Ref: "v1"})
	p := "/projects/root%2Fdemo/builds/" + strconv.Itoa(bid)

	status, _, body := buildsCall(t, s, s.AdminToken, "GET", p)
	buildsExpect(t, status, 200, body)
	rec := buildsDecode[map[string]any](t, body)
	if rec["coverage"] != 75.25 || rec["tag"] != true || rec["ref"] != "v1" || rec["runner"] != nil {
		t.Errorf("record %v", rec)
	}
	if af, _ := rec["artifacts_file"].(map[string]any); af["filename"] != "out.zip" || af["size"] != 8.0 {
		t.Errorf("artifacts_file %v", rec["artifacts_file"])
	}
	if u, _ := rec["user"].(map[string]any); u["username"] != "root" || u["is_admin"] != true {
		t.Errorf("user %v", rec["user"])
	}
	if _, ok := rec["download_url"]; ok {
		t.Error("download_url belongs to erase and keep records only")
	}

	status, h, body := buildsCall(t, s, s.AdminToken, "GET", p+"/artifacts")
	buildsExpect(t, status, 200, body)
	if string(body) != "zipbytes" || h.Get("Content-Type") != "application/octet-stream" ||
		h.Get("Content-Disposition") != "attachment; filename=out.zip" || h.Get("Content-Length") != "8" {
		t.Errorf("artifacts: %q %v", body, h)
	}
	status, h, body = buildsCall(t, s, s.AdminToken, "GET", p+"/trace")
	buildsExpect(t, status, 200, body)
	if string(body) != "hello\n" || h.Get("Content-Type") != "text/plain" ||
		h.Get("Content-Disposition") != `infile; filename="`+strconv.Itoa(bid)+`.log"` {
		t.Errorf("trace: %q %v", body, h)
	}

	for _, path := range []string{"/projects/" + strconv.Itoa(pid) + "/builds/abc", "/projects/" + strconv.Itoa(pid) + "/builds/-1/trace", "/projects/999999/builds/" + strconv.Itoa(bid)} {
		status, _, body = buildsCall(t, s, s.AdminToken, "GET", path)
		buildsExpect(t, status, 404, body)
	}
	status, _, body = buildsCall(t, s, s.AdminToken, "GET", "/projects/"+strconv.Itoa(pid)+"/builds/424242")
	buildsExpect(t, status, 404, body)
	if msg := buildsDecode[map[string]string](t, body)["message"]; msg != "404 Build Not Found" {
		t.Errorf("message %q", msg)
	}
	status, _, body = buildsCall(t, s, s.AdminToken, "DELETE", p)
	buildsExpect(t, status, 405, body)
}

func TestBuildsEraseKeepState(t *testing.T) {
	s, pid := newBuildsServer(t)
	bid := s.AddBuild(pid, BuildSpec{Status: "failed", Artifacts: []byte("zip"), Trace: "log"})
	s.mu.Lock()
	s.builds[bid].artifactsExpireAt = time.Now().Add(time.Hour)
	s.mu.Unlock()
	p := "/projects/" + strconv.Itoa(pid) + "/builds/" + strconv.Itoa(bid)

	status, _, body := buildsCall(t, s, s.AdminToken, "POST", p+"/artifacts/keep")
	buildsExpect(t, status, 200, body)
	rec := buildsDecode[map[string]any](t, body)
	if v, ok := rec["download_url"]; !ok || v != nil {
		t.Errorf("keep record carries download_url null: %v", rec)
	}
	if _, ok := rec["artifacts_file"]; ok {
		t.Errorf("keep record has no artifacts_file: %v", rec)
	}
	s.mu.Lock()
	kept := s.builds[bid].artifactsExpireAt.IsZero()
	s.mu.Unlock()
	if !kept {
		t.Error("keep must clear the expiry")
	}

	status, _, body = buildsCall(t, s, s.AdminToken, "POST", p+"/erase")
	buildsExpect(t, status, 201, body)
	rec = buildsDecode[map[string]any](t, body)
	if v, ok := rec["download_url"]; !ok || v != nil {
		t.Errorf("erase record carries download_url null: %v", rec)
	}
	if _, ok := rec["artifacts_file"]; ok {
		t.Errorf("erase record has no artifacts_file: %v", rec)
	}
	s.mu.Lock()
	b := s.builds[bid]
	erased := b.erased && b.artifacts == nil && b.trace == nil
	s.mu.Unlock()
	if !erased {
		t.Error("erase must mark the build erased and drop artifacts and trace")
	}
	for _, sub := range []string{"/artifacts", "/trace"} {
		status, _, body = buildsCall(t, s, s.AdminToken, "GET", p+sub)
		buildsExpect(t, status, 404, body)
	}
	status, _, body = buildsCall(t, s, s.AdminToken, "POST", p+"/erase")
	buildsExpect(t, status, 403, body)
	if msg := buildsDecode[map[string]string](t, body)["message"]; msg != "403 Forbidden - Build is not erasable!" {
		t.Errorf("message %q", msg)
	}
}

func TestBuildsRetryCopiesTheJob(t *testing.T) {
	s, pid := newBuildsServer(t)
	dev := s.AddUser("dev", false)
	s.AddMember(pid, dev.ID, 30)
	bid := s.AddBuild(pid, BuildSpec{Name: "rspec", Stage: "test", Ref: "feature", Commit: "abc123", Status: "pending", Commands: "make\nmake test", Tag: true})
	s.mu.Lock()
	s.builds[bid].variables = []buildVariable{{Key: "K", Value: "V", Public: true}}
	s.builds[bid].beforeSHA = "000"
	s.mu.Unlock()
	p := "/projects/" + strconv.Itoa(pid) + "/builds/" + strconv.Itoa(bid)

	status, _, body := buildsCall(t, s, dev.Token, "POST", p+"/retry")
	buildsExpect(t, status, 403, body)
	if msg := buildsDecode[map[string]string](t, body)["message"]; msg != "403 Forbidden - Build is not retryable" {
		t.Errorf("message %q", msg)
	}
	s.SetBuildStatus(bid, "running")
	s.SetBuildStatus(bid, "skipped")

	status, _, body = buildsCall(t, s, dev.Token, "POST", p+"/cancel")
	buildsExpect(t, status, 403, body)
	if msg := buildsDecode[map[string]string](t, body)["message"]; msg != "403 Forbidden - Build is not cancelable" {
		t.Errorf("message %q", msg)
	}

	status, _, body = buildsCall(t, s, dev.Token, "POST", p+"/retry")
	buildsExpect(t, status, 201, body)
	rec := buildsDecode[map[string]any](t, body)
	nid := int(rec["id"].(float64))
	if nid == bid || rec["status"] != "pending" || rec["started_at"] != nil || rec["finished_at"] != nil {
		t.Errorf("retried record %v", rec)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	nb, old := s.builds[nid], s.builds[bid]
	if nb.name != "rspec" || nb.stage != "test" || nb.ref != "feature" || nb.commitID != "abc123" || !nb.tag ||
		nb.commands != "make\nmake test" || nb.beforeSHA != "000" || len(nb.variables) != 1 || nb.userID != dev.ID {
		t.Errorf("retried build %+v", nb)
	}
	if nb.artifacts != nil || nb.trace != nil || nb.runnerID != 0 {
		t.Errorf("retried build starts clean: %+v", nb)
	}
	if old.status != "skipped" || old.finishedAt.IsZero() {
		t.Errorf("old build changed: %+v", old)
	}
}

func TestBuildsAccessRules(t *testing.T) {
	s, pid := newBuildsServer(t)
	bid := s.AddBuild(pid, BuildSpec{Status: "running", Artifacts: []byte("z")})
	users := map[int]User{}
	for _, lvl := range []int{0, 10, 20, 30, 40} {
		u := s.AddUser("u"+strconv.Itoa(lvl), false)
		if lvl > 0 {
			s.AddMember(pid, u.ID, lvl)
		}
		users[lvl] = u
	}
	p := "/projects/" + strconv.Itoa(pid) + "/builds/" + strconv.Itoa(bid)
	for lvl, wantRead := range map[int]int{0: 404, 10: 403, 20: 200, 30: 200, 40: 200} {
		status, _, body := buildsCall(t, s, users[lvl].Token, "GET", p)
		if status != wantRead {
			t.Errorf("level %d read: %d, want %d (%s)", lvl, status, wantRead, body)
		}
	}
	for lvl, wantAct := range map[int]int{0: 404, 10: 403, 20: 403} {
		status, _, body := buildsCall(t, s, users[lvl].Token, "POST", p+"/artifacts/keep")
		if status != wantAct {
			t.Errorf("level %d keep: %d, want %d (%s)", lvl, status, wantAct, body)
		}
	}
	status, _, body := buildsCall(t, s, users[40].Token, "POST", p+"/artifacts/keep")
	buildsExpect(t, status, 200, body)

	// Sudo as a reporter reads but may not act.
	req, _ := http.NewRequest("POST", s.URL+"/api/v3"+p+"/cancel", nil)
	req.Header.Set("PRIVATE-TOKEN", s.AdminToken)
	req.Header.Set("SUDO", "u20")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("sudo reporter cancel: %d", resp.StatusCode)
	}

	status, _, body = buildsCall(t, s, "nope", "GET", p)
	buildsExpect(t, status, 401, body)

	// Builds disabled: nobody, not even an admin, reads them.
	s.mu.Lock()
	s.projects[pid].buildsEnabled = false
	s.mu.Unlock()
	status, _, body = buildsCall(t, s, s.AdminToken, "GET", "/projects/"+strconv.Itoa(pid)+"/builds")
	buildsExpect(t, status, 403, body)

	// visInternal projects: any signed-in user reads.
	ipid := s.AddProject(s.AdminID, "internal", 10)
	ibid := s.AddBuild(ipid, BuildSpec{})
	status, _, body = buildsCall(t, s, users[0].Token, "GET", "/projects/"+strconv.Itoa(ipid)+"/builds/"+strconv.Itoa(ibid))
	buildsExpect(t, status, 200, body)
	status, _, body = buildsCall(t, s, users[0].Token, "POST", "/projects/"+strconv.Itoa(ipid)+"/builds/"+strconv.Itoa(ibid)+"/cancel")
	buildsExpect(t, status, 403, body)
}

func TestBuildsCommitList(t *testing.T) {
	s, pid := newBuildsServer(t)
	first := s.AddBranch(pid, "master", "")
	second := s.AddBranch(pid, "master", "")
	old := s.AddBuild(pid, BuildSpec{Commit: first})
	cur := s.AddBuild(pid, BuildSpec{})
	for sha, want := range map[string]int{first: old, second: cur} {
		status, _, body := buildsCall(t, s, s.AdminToken, "GET", "/projects/"+strconv.Itoa(pid)+"/repository/commits/"+sha+"/builds")
		buildsExpect(t, status, 200, body)
		got := buildsDecode[[]map[string]any](t, body)
		if len(got) != 1 || int(got[0]["id"].(float64)) != want {
			t.Errorf("commit %s: %v", sha, got)
		}
	}
	// A commit known only from a build (no branch points at it).
	orphan := s.AddBuild(pid, BuildSpec{Commit: "c0ffee"})
	status, _, body := buildsCall(t, s, s.AdminToken, "GET", "/projects/"+strconv.Itoa(pid)+"/repository/commits/c0ffee/builds")
	buildsExpect(t, status, 200, body)
	if got := buildsDecode[[]map[string]any](t, body); len(got) != 1 || int(got[0]["id"].(float64)) != orphan {
		t.Errorf("orphan commit: %v", got)
	}
	// A branch head with no builds is known and lists nothing.
	third := s.AddBranch(pid, "master", "")
	status, _, body = buildsCall(t, s, s.AdminToken, "GET", "/projects/"+strconv.Itoa(pid)+"/repository/commits/"+third+"/builds")
	buildsExpect(t, status, 200, body)
	if string(body) != "[]" {
		t.Errorf("body %s", body)
	}
	status, _, body = buildsCall(t, s, s.AdminToken, "GET", "/projects/"+strconv.Itoa(pid)+"/repository/commits/deadbeef/builds?scope=pending")
	buildsExpect(t, status, 404, body)
	if msg := buildsDecode[map[string]string](t, body)["message"]; msg != "404 Commit Not Found" {
		t.Errorf("message %q", msg)
	}
}

func TestBuildsSeeding(t *testing.T) {
	s, pid := newBuildsServer(t)
	if id := s.AddBuild(999999, BuildSpec{}); id != 0 {
		t.Errorf("AddBuild on a missing project = %d", id)
	}
	s.SetBuildStatus(999999, "running") // no build: nothing happens
	bid := s.AddBuild(pid, BuildSpec{Commit: "c0ffee", Artifacts: []byte{}})
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.builds[bid]
	if b.artifactsName != "artifacts.zip" || b.artifacts == nil || b.commitID != "c0ffee" || !b.startedAt.IsZero() {
		t.Errorf("seeded %+v", b)
	}
	if rec := s.buildRecord(b); rec.Commit.ShortID != "c0ffee" {
		t.Errorf("short id of a short commit: %+v", rec.Commit)
	}
}

// TestBuildsEveryEndpointRefuses walks each endpoint through its refusals:
// a hidden project, a missing build and, for actions, a reporter.
func TestBuildsEveryEndpointRefuses(t *testing.T) {
	s, pid := newBuildsServer(t)
	bid := s.AddBuild(pid, BuildSpec{Status: "success"})
	reporter := s.AddUser("rep", false)
	s.AddMember(pid, reporter.ID, 20)
	stranger := s.AddUser("stranger", false)
	for _, ep := range []struct {
		method, suffix string
		action         bool
	}{
		{"GET", "", false}, {"GET", "/artifacts", false}, {"GET", "/trace", false},
		{"POST", "/cancel", true}, {"POST", "/retry", true}, {"POST", "/erase", true}, {"POST", "/artifacts/keep", true},
	} {
		own := "/projects/" + strconv.Itoa(pid) + "/builds/"
		for _, tc := range []struct {
			token, path string
			want        int
		}{
			{stranger.Token, own + strconv.Itoa(bid) + ep.suffix, 404},
			{s.AdminToken, own + "424242" + ep.suffix, 404},
			{s.AdminToken, own + "x" + ep.suffix, 404},
		} {
			status, _, body := buildsCall(t, s, tc.token, ep.method, tc.path)
			if status != tc.want {
				t.Errorf("%s %s: %d, want %d (%s)", ep.method, tc.path, status, tc.want, body)
			}
		}
		if ep.action {
			status, _, body := buildsCall(t, s, reporter.Token, ep.method, own+strconv.Itoa(bid)+ep.suffix)
			if status != 403 {
				t.Errorf("reporter %s %s: %d (%s)", ep.method, ep.suffix, status, body)
			}
		}
	}
	for _, path := range []string{"/projects/" + strconv.Itoa(pid) + "/builds", "/projects/" + strconv.Itoa(pid) + "/repository/commits/abc/builds"} {
		status, _, body := buildsCall(t, s, stranger.Token, "GET", path)
		if status != 404 {
			t.Errorf("stranger %s: %d (%s)", path, status, body)
		}
	}
	// An unknown commit is reported before the scope is read, as deployed servers do.
	status, _, body := buildsCall(t, s, s.AdminToken, "GET", "/projects/"+strconv.Itoa(pid)+"/repository/commits/abc/builds?scope=nope")
	buildsExpect(t, status, 404, body)
}

func TestBuildsCancelAndRunnerRendering(t *testing.T) {
	s, pid := newBuildsServer(t)
	bid := s.AddBuild(pid, BuildSpec{Status: "running"})
	s.mu.Lock()
	rid := s.newID()
	s.runners[rid] = &runner{id: rid, description: "docker-1", active: true, isShared: true}
	s.builds[bid].runnerID = rid
	s.mu.Unlock()
	p := "/projects/" + strconv.Itoa(pid) + "/builds/" + strconv.Itoa(bid)

	status, _, body := buildsCall(t, s, s.AdminToken, "POST", p+"/cancel")
	buildsExpect(t, status, 201, body)
	rec := buildsDecode[map[string]any](t, body)
	if rec["status"] != "canceled" || rec["finished_at"] == nil {
		t.Errorf("canceled record %v", rec)
	}
	want := map[string]any{"id": float64(rid), "description": "docker-1", "active": true, "is_shared": true, "name": nil}
	got, _ := rec["runner"].(map[string]any)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("runner.%s = %v, want %v", k, got[k], v)
		}
	}
	status, _, body = buildsCall(t, s, s.AdminToken, "POST", p+"/artifacts/keep")
	buildsExpect(t, status, 404, body)
}
