package collab_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRootOnlyModuleGraph builds the module graph of a program that imports
// only the root package, as the README's dependency section reports it,
// checks that none of the nested modules' heavy dependencies is in it, and
// that the retry engine, go-retryablehttp, is built into the program.
// It runs offline: the root's go.sum covers the graph.
func TestRootOnlyModuleGraph(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	repo, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"go.mod": "module example.com/rootonly\n\ngo 1.25.0\n\nrequire github.com/collabsvc/collab v0.0.0\n\n" +
			"replace github.com/collabsvc/collab => " + repo + "\n",
		"go.sum":  string(sum),
		"main.go": "package main\n\nimport \"github.com/collabsvc/collab\"\n\nfunc main() { _ = collab.Ptr(1) }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(gobin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	// As a user's go get and go mod tidy leave it. -e: offline, the modules
	// that only the dependencies' own tests import may be missing from the
	// module cache; the graph does not depend on them.
	run("mod", "tidy", "-e")
	out := run("list", "-m", "all")
	mods := strings.Split(strings.TrimSpace(string(out)), "\n")
	for _, m := range mods {
		for _, heavy := range []string{"github.com/redis/go-redis", "github.com/spf13/cobra", "github.com/itchyny/gojq", "gitlab.com/gitlab-org/api/client-go"} {
			if strings.HasPrefix(m, heavy) {
				t.Errorf("a root-only program's module graph holds %s", m)
			}
		}
	}
	t.Logf("go list -m all: %d entries\n%s", len(mods), out)
	// The client's retries run on go-retryablehttp: it is built into the program.
	deps := strings.Fields(string(run("list", "-deps", ".")))
	assert.Contains(t, deps, "github.com/hashicorp/go-retryablehttp")
}
