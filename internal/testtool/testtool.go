// Package testtool finds the programs beside Go that some tests run:
// redis-server, jq and curl. On a machine without one, such a test skips
// with one line naming the Debian package that installs it; where the
// environment variable CI is set, it fails instead, so that CI cannot pass
// by skipping.
package testtool

import (
	"os"
	"os/exec"
	"testing"
)

// Path returns the path of the program name (redis-server, jq, curl: each
// is also the name of its Debian package), or ends the test without it.
func Path(t testing.TB, name string) string {
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
