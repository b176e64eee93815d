package bench

import (
	"os"
	"os/exec"
	"testing"
)

// needTool returns the path of the program name (curl, which is also the
// name of its Debian package), or ends the test: on a machine without it
// the test skips with one line naming the package; where the environment
// variable CI is set it fails, so that CI cannot pass by skipping. A module
// of its own, bench cannot share the other modules' internal helpers.
func needTool(t testing.TB, name string) string {
	t.Helper()
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
