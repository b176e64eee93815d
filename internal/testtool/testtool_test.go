package testtool

import (
	"runtime"
	"testing"
)

// A program the machine lacks skips the test, or fails it where CI is set.
func TestPath(t *testing.T) {
	const name = "no-such-program-collab-testtool"
	t.Setenv("PATH", t.TempDir())
	for _, ci := range []string{"", "true"} {
		t.Run("CI="+ci, func(t *testing.T) {
			t.Setenv("CI", ci)
			got := &recorder{T: t}
			done := make(chan struct{})
			go func() { defer close(done); Path(got, name) }()
			<-done
			want := name + " not found: install the Debian package " + name + " (apt-get install redis-server jq curl)"
			if ci != "" {
				want += "; CI is set, so a missing program fails the test"
			}
			if got.msg != want || got.skipped == (ci != "") {
				t.Errorf("Path with CI=%q: skipped %v, %q; want skipped %v, %q", ci, got.skipped, got.msg, ci == "", want)
			}
		})
	}
}

func TestPathFound(t *testing.T) {
	if got := Path(t, "go"); got == "" {
		t.Error("Path(go) is empty")
	}
}

// recorder notes how Path ended the test instead of ending it.
type recorder struct {
	*testing.T
	skipped bool
	msg     string
}

func (r *recorder) Helper() {}

func (r *recorder) Skip(args ...any) { r.skipped, r.msg = true, args[0].(string); runtime.Goexit() }

func (r *recorder) Fatal(args ...any) { r.msg = args[0].(string); runtime.Goexit() }
