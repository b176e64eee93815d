package main

import (
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func init() {
	extraCmds["need"] = cmdNeed
}

// ender is what needTool needs of a test, a benchmark or a script's test.
type ender interface {
	Skip(args ...any)
	Fatal(args ...any)
}

// needTool returns the path of the program name (redis-server, jq, curl:
// each is also the name of its Debian package), or ends the test: on a
// machine without it the test skips with one line naming the package;
// where the environment variable CI is set it fails, so that CI cannot
// pass by skipping.
func needTool(t ender, name string) string {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	msg := name + " not found: install the Debian package " + name + " (apt-get install redis-server jq curl)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; CI is set, so a missing program fails the test")
	}
	t.Skip(msg)
	return ""
}

// scriptTestKey finds the script's test among the testscript values.
type scriptTestKey struct{}

// need TOOL... skips the script, or fails it where CI is set, unless every
// TOOL is installed. It comes first in a script, before any background
// command.
func cmdNeed(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: need TOOL...")
	}
	for _, name := range args {
		needTool(scriptTest(ts), name)
	}
}

func scriptTest(ts *testscript.TestScript) testscript.T {
	return ts.Value(scriptTestKey{}).(testscript.T)
}

// enderRecorder notes how needTool ended a test instead of ending it.
type enderRecorder struct {
	skipped bool
	msg     string
}

func (r *enderRecorder) Skip(args ...any) {
	r.skipped, r.msg = true, args[0].(string)
	runtime.Goexit()
}
func (r *enderRecorder) Fatal(args ...any) { r.msg = args[0].(string); runtime.Goexit() }

// TestNeedTool: a program the machine lacks skips the test, naming its
// Debian package, or fails it where CI is set.
func TestNeedTool(t *testing.T) {
	const name = "no-such-program-collab"
	t.Setenv("PATH", t.TempDir())
	want := name + " not found: install the Debian package " + name + " (apt-get install redis-server jq curl)"
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		var got enderRecorder
		done := make(chan struct{})
		go func() { defer close(done); needTool(&got, name) }()
		<-done
		expect := enderRecorder{skipped: true, msg: want}
		if ci != "" {
			expect = enderRecorder{msg: want + "; CI is set, so a missing program fails the test"}
		}
		if got != expect {
			t.Errorf("needTool with CI=%q: %+v; want %+v", ci, got, expect)
		}
	}
}
