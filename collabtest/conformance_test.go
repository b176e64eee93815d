package collabtest_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/collabsvc/collab/collabtest"
)

// The runner's own client of mid 2016 (gitlab-runner v1.3.0's network
// package and the dependencies its tag pins), unmodified, is in
// testdata/runner-v1.3.0 as the tarball it was published in; its sources
// are not gofmt'ed today, so they are unpacked only here. A small driver
// program (testdata/runner-v1.3.0/driver, a module of its own that reaches
// the client through replace lines) runs the client one step at a time,
// and the test checks the fake's state after each step. Building it needs
// the go command and nothing from the network.

// runnerDriver is the running driver program.
type runnerDriver struct {
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *lockedBuffer
	url    string
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// driverReply mirrors the driver's answer; State is the client's
// Update/Upload/DownloadState, where 0 is success.
type driverReply struct {
	OK    bool   `json:"ok"`
	State int    `json:"state"`
	Token string `json:"token"`
	Build *struct {
		ID        int    `json:"id"`
		ProjectID int    `json:"project_id"`
		Token     string `json:"token"`
		Name      string `json:"name"`
		Variables []struct {
			Key    string `json:"key"`
			Value  string `json:"value"`
			Public bool   `json:"public"`
		} `json:"variables"`
	} `json:"build"`
	Data  []byte `json:"data"`
	Error string `json:"error"`
}

// do sends one command; url and the other fields are the driver's command.
func (d *runnerDriver) do(t *testing.T, cmd map[string]any) driverReply {
	t.Helper()
	if _, ok := cmd["url"]; !ok {
		cmd["url"] = d.url
	}
	line, err := json.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.in.Write(append(line, '\n')); err != nil {
		t.Fatalf("driver: %v\n%s", err, d.stderr)
	}
	if !d.out.Scan() {
		t.Fatalf("driver ended: %v\n%s", d.out.Err(), d.stderr)
	}
	var r driverReply
	if err := json.Unmarshal(d.out.Bytes(), &r); err != nil || r.Error != "" {
		t.Fatalf("driver reply %s: %v", d.out.Bytes(), err)
	}
	return r
}

// startRunnerDriver unpacks the client, builds the driver and starts it
// against baseURL.
func startRunnerDriver(t *testing.T, baseURL string) *runnerDriver {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the runner v1.3.0 client")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the runner v1.3.0 client with")
	}
	dir := t.TempDir()
	if err := untar(filepath.Join("testdata", "runner-v1.3.0", "runner-v1.3.0-src.tar.gz"), dir); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(dir, "driver"), os.DirFS(filepath.Join("testdata", "runner-v1.3.0", "driver"))); err != nil {
		t.Fatal(err)
	}
	const common = "gitlab.com/gitlab-org/gitlab-ci-multi-runner/common"
	bin := filepath.Join(dir, "driver-bin")
	build := exec.Command(goCmd, "build", "-o", bin,
		"-ldflags", "-X "+common+".VERSION=1.3.0 -X "+common+".REVISION=f9b34378", ".")
	build.Dir = filepath.Join(dir, "driver")
	// Only the unpacked sources: no workspace, no proxy, no other toolchain.
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOPROXY=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the driver: %v\n%s", err, out)
	}

	cmd := exec.Command(bin)
	d := &runnerDriver{stderr: &lockedBuffer{}, url: baseURL + "/ci"}
	cmd.Stderr = d.stderr
	if d.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d.out = bufio.NewScanner(stdout)
	d.out.Buffer(make([]byte, 1<<20), 64<<20)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.in.Close() // the driver ends at the end of its input
		if err := cmd.Wait(); err != nil {
			t.Errorf("driver: %v", err)
		}
		if t.Failed() {
			t.Logf("the runner client's log:\n%s", d.stderr)
		}
	})
	return d
}

// untar unpacks a .tar.gz of regular files and directories into dir.
func untar(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !filepath.IsLocal(h.Name) {
			return errors.New("archive entry outside the directory: " + h.Name)
		}
		dst := filepath.Join(dir, filepath.FromSlash(h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(dst, 0o755)
		case tar.TypeReg:
			err = writeFile(dst, tr)
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(dst string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	w, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// eventually polls cond: the client's trace loop sends every 3 seconds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
	}
}

func runnerByID(s *collabtest.Server, id int) (collabtest.Runner, bool) {
	rs := s.Runners()
	i := slices.IndexFunc(rs, func(r collabtest.Runner) bool { return r.ID == id })
	if i < 0 {
		return collabtest.Runner{}, false
	}
	return rs[i], true
}

// TestRunnerV130Conformance drives the runner's own v1.3.0 client through a
// runner's life against the fake: register, verify, take a build, stream
// its trace through the client's trace loop, upload and download
// artifacts, finish, pause, cancel, and unregister.
func TestRunnerV130Conformance(t *testing.T) {
	s := collabtest.NewTestServer(t)
	d := startRunnerDriver(t, s.URL)
	pid := s.AddProject(s.AdminID, "Widget Factory", 0)

	// Register: a bad token is refused and stores nothing; the shared
	// registration token makes a shared runner with its tags and info.
	if r := d.do(t, map[string]any{"op": "register", "token": "not-a-registration-token"}); r.OK {
		t.Fatal("registered with an unknown token")
	}
	if n := len(s.Runners()); n != 0 {
		t.Fatalf("%d runners after a refused registration", n)
	}
	reg := d.do(t, map[string]any{"op": "register", "token": s.RunnersRegistrationToken(),
		"description": "conformance runner", "tags": "docker,linux"})
	if !reg.OK || reg.Token == "" {
		t.Fatalf("register: %+v", reg.OK)
	}
	rs := s.Runners()
	if len(rs) != 1 {
		t.Fatalf("runners %+v", rs)
	}
	rn := rs[0]
	want := collabtest.Runner{ID: rn.ID, Description: "conformance runner", Active: true, Shared: true,
		Tags: []string{"docker", "linux"}, RunUntagged: true, Name: "gitlab-ci-multi-runner", Version: "1.3.0",
		Revision: "f9b34378", Platform: runtime.GOOS, Architecture: runtime.GOARCH}
	if !equalRunner(rn, want) {
		t.Fatalf("registered runner\n got %+v\nwant %+v", rn, want)
	}
	proj := d.do(t, map[string]any{"op": "register", "token": s.ProjectRunnersToken(pid), "description": "project runner"})
	if rs := s.Runners(); !proj.OK || len(rs) != 2 || rs[1].Shared || rs[1].ProjectID != pid || rs[1].Description != "project runner" {
		t.Fatalf("project runner %+v", rs)
	}

	// Verify: PUT /builds/-1 answers 404, alive, and records the contact.
	if r := d.do(t, map[string]any{"op": "verify", "token": reg.Token}); !r.OK {
		t.Fatal("a registered runner is not alive")
	}
	if rn, _ = runnerByID(s, rn.ID); rn.ContactedAt.IsZero() {
		t.Fatal("verify did not reach the runner's record")
	}

	// Take a build: the older build needs a tag the runner lacks.
	windows := s.AddBuild(pid, collabtest.BuildSpec{Name: "msbuild", Tags: []string{"windows"}})
	bid := s.AddBuild(pid, collabtest.BuildSpec{Name: "rspec", Stage: "test", Tags: []string{"docker"}, Commands: "make test"})
	s.SetBuildVariables(bid, map[string]string{"DB_PASSWORD": "hunter2"}, false)
	got := d.do(t, map[string]any{"op": "get_build", "token": reg.Token})
	if !got.OK || got.Build == nil || got.Build.ID != bid || got.Build.Name != "rspec" || got.Build.ProjectID != pid {
		t.Fatalf("get_build: ok %v, build %+v", got.OK, got.Build)
	}
	var keys []string
	for _, v := range got.Build.Variables {
		keys = append(keys, v.Key)
	}
	if strings.Join(keys, ",") != "CI_BUILD_NAME,CI_BUILD_STAGE,DB_PASSWORD" {
		t.Errorf("variables %v", keys)
	}
	if st, runnerID := s.BuildStatus(bid); st != "running" || runnerID != rn.ID {
		t.Fatalf("build %s by runner %d", st, runnerID)
	}
	if st, _ := s.BuildStatus(windows); st != "pending" {
		t.Fatalf("the windows build is %s", st)
	}
	buildToken := got.Build.Token
	if buildToken != s.ProjectRunnersToken(pid) {
		t.Fatal("the build token is not the project's")
	}

	// Stream the trace through the client's own trace loop (PATCH appends).
	d.do(t, map[string]any{"op": "start_trace", "build_id": bid, "token": reg.Token, "build_token": buildToken})
	for _, log := range []string{"$ make test\n", "$ make test\n12 examples, 0 failures\n"} {
		d.do(t, map[string]any{"op": "write_trace", "build_id": bid, "text": strings.TrimPrefix(log, string(s.BuildTrace(bid)))})
		eventually(t, "trace "+log, func() bool { return string(s.BuildTrace(bid)) == log })
	}

	// Artifacts, with the build token.
	zip := []byte("PK\x03\x04 conformance artifacts")
	if r := d.do(t, map[string]any{"op": "upload", "build_id": bid, "build_token": buildToken, "data": zip, "expire_in": "1 week"}); r.State != 0 {
		t.Fatalf("upload state %d", r.State)
	}
	if name, data := s.BuildArtifacts(bid); name != "artifacts.zip" || !bytes.Equal(data, zip) {
		t.Fatalf("stored artifacts %q %q", name, data)
	}
	if r := d.do(t, map[string]any{"op": "upload", "build_id": bid, "build_token": "bad", "data": []byte("x")}); r.State != 2 {
		t.Fatalf("upload with a bad token: state %d, want UploadForbidden", r.State)
	}
	if r := d.do(t, map[string]any{"op": "download", "build_id": bid, "build_token": buildToken}); r.State != 0 || !bytes.Equal(r.Data, zip) {
		t.Fatalf("download state %d, %q", r.State, r.Data)
	}

	// Finish: the loop sends the whole trace with the state.
	d.do(t, map[string]any{"op": "finish_trace", "build_id": bid})
	if st, _ := s.BuildStatus(bid); st != "success" {
		t.Fatalf("finished build is %s", st)
	}
	if got := string(s.BuildTrace(bid)); got != "$ make test\n12 examples, 0 failures\n" {
		t.Fatalf("final trace %q", got)
	}

	// Pause: nothing to do and still healthy, still alive.
	s.SetRunnerActive(rn.ID, false)
	next := s.AddBuild(pid, collabtest.BuildSpec{Name: "lint", Tags: []string{"linux"}})
	if r := d.do(t, map[string]any{"op": "get_build", "token": reg.Token}); !r.OK || r.Build != nil {
		t.Fatalf("paused runner: healthy %v, build %+v", r.OK, r.Build)
	}
	if st, _ := s.BuildStatus(next); st != "pending" {
		t.Fatalf("a paused runner took build %d (%s)", next, st)
	}
	if r := d.do(t, map[string]any{"op": "verify", "token": reg.Token}); !r.OK {
		t.Fatal("a paused runner is not alive")
	}
	if rn, _ := runnerByID(s, rn.ID); rn.Active {
		t.Fatal("the runner is active")
	}

	// Resume and cancel: the trace loop reads Build-Status: canceled on an
	// append the server keeps, and aborts the build.
	s.SetRunnerActive(rn.ID, true)
	if r := d.do(t, map[string]any{"op": "get_build", "token": reg.Token}); r.Build == nil || r.Build.ID != next {
		t.Fatalf("resumed runner took %+v", r.Build)
	}
	d.do(t, map[string]any{"op": "start_trace", "build_id": next, "token": reg.Token, "build_token": buildToken})
	d.do(t, map[string]any{"op": "write_trace", "build_id": next, "text": "linting\n"})
	eventually(t, "first lint trace", func() bool { return string(s.BuildTrace(next)) == "linting\n" })
	s.SetBuildStatus(next, "canceled")
	d.do(t, map[string]any{"op": "write_trace", "build_id": next, "text": "still linting\n"})
	if r := d.do(t, map[string]any{"op": "wait_abort", "build_id": next}); !r.OK {
		t.Fatal("the trace loop did not abort the canceled build")
	}
	d.do(t, map[string]any{"op": "finish_trace", "build_id": next, "failed": true})
	if st, _ := s.BuildStatus(next); st != "canceled" {
		t.Fatalf("canceled build is %s", st)
	}
	if got := string(s.BuildTrace(next)); got != "linting\nstill linting\n" {
		t.Fatalf("canceled build's trace %q", got)
	}

	// Unregister: the runner is gone, and no longer alive.
	if r := d.do(t, map[string]any{"op": "delete", "token": reg.Token}); !r.OK {
		t.Fatal("delete failed")
	}
	if _, ok := runnerByID(s, rn.ID); ok {
		t.Fatal("the runner is still stored")
	}
	if r := d.do(t, map[string]any{"op": "verify", "token": reg.Token}); r.OK {
		t.Fatal("a deleted runner is alive")
	}
	if r := d.do(t, map[string]any{"op": "delete", "token": reg.Token}); r.OK {
		t.Fatal("deleted twice")
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if n := s.Panics(); n != 0 {
		t.Fatalf("%d handler panics", n)
	}
}

// equalRunner compares runners but for the time of their last contact.
func equalRunner(a, b collabtest.Runner) bool {
	a.ContactedAt, b.ContactedAt = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}
