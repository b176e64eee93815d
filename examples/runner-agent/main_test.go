package main

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"go.uber.org/goleak"
)

func TestRunnerAgent(t *testing.T) {
	t.Setenv("COLLAB_URL", "")
	var out, errOut bytes.Buffer
	code := run(context.Background(), nil, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"registered and verified runner", "1. took build", "2. job succeeded",
		"3. uploaded 2 files from [out] as artifacts.zip", "4. reported success", "unregistered runner"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestRunnerAgentRegisters runs the agent against a server of the test's
// own: it registers, takes the build, and leaves no runner behind.
func TestRunnerAgentRegisters(t *testing.T) {
	srv := collabtest.NewTestServer(t)
	project := srv.Seed.Project(srv.Admin, "app", collab.PrivateVisibility)
	pid := project.ID
	bid := srv.Seed.Build(project, collabtest.BuildSpec{Commands: "echo hi"}).ID
	t.Setenv("COLLAB_URL", srv.URL)
	t.Setenv("COLLAB_RUNNER_TOKEN", "")

	t.Setenv("COLLAB_REGISTRATION_TOKEN", "not-a-registration-token")
	var out, errOut bytes.Buffer
	if code := run(context.Background(), nil, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "registering") {
		t.Fatalf("exit %d with a bad registration token\n%s", code, errOut.String())
	}
	if st, _ := srv.BuildStatus(bid); st != "pending" || len(srv.Runners()) != 0 {
		t.Fatalf("build %s, runners %+v", st, srv.Runners())
	}

	t.Setenv("COLLAB_REGISTRATION_TOKEN", srv.ProjectRunnersToken(pid))
	out.Reset()
	if code := run(context.Background(), nil, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	st, runnerID := srv.BuildStatus(bid)
	if st != "success" || runnerID == 0 {
		t.Fatalf("build %s by runner %d", st, runnerID)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("unregistered runner %d", runnerID)) {
		t.Errorf("output:\n%s", out.String())
	}
	if rs := srv.Runners(); len(rs) != 0 {
		t.Fatalf("runners left: %+v", rs)
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestRunnerAgentBadFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"-nope"}, &out, &errOut); code != 2 {
		t.Fatalf("exit %d", code)
	}
}

func TestZipPaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "out", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(dir, "out", "a.txt"), []byte("a"), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "out", "sub", "b.txt"), []byte("bb"), 0o644)
	var buf bytes.Buffer
	n, err := zipPaths(&buf, dir, []string{"out", "missing"})
	if err != nil || n != 2 {
		t.Fatalf("%d files, %v", n, err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "out/a.txt,out/sub/b.txt" {
		t.Errorf("entries %v", names)
	}
	for _, bad := range []string{"../etc", "/etc/passwd", ".."} {
		if _, err := zipPaths(&buf, dir, []string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
