package collab_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRootOnlyModuleGraph builds the module graph of a program that imports
// only the root package, as the README's dependency section reports it,
// checks that none of the nested modules' heavy dependencies is in it, and
// that the retry engine, go-retryablehttp, is built into the program.
//
// It runs offline and reads only what building the root package has
// already put in the module cache: the go.mod files and sources of the
// modules it builds with. go mod tidy and go list -m would also look up
// modules that only the dependencies' own tests import, so whether they
// succeed offline would depend on what ran before; go mod graph does not.
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
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(gobin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOPROXY=off")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr(err))
		}
		return string(out)
	}
	// As go get leaves it: -mod=mod adds a requirement on each module that
	// provides a package the program builds, found in the root's go.mod.
	deps := strings.Fields(run("list", "-mod=mod", "-deps", "."))
	// The client's retries run on go-retryablehttp: it is built into the program.
	assert.Contains(t, deps, "github.com/hashicorp/go-retryablehttp")

	graph := run("mod", "graph")
	var mods []string
	for _, line := range strings.Split(strings.TrimSpace(graph), "\n") {
		for _, node := range strings.Fields(line) {
			if path, _, _ := strings.Cut(node, "@"); path != "go" && path != "toolchain" {
				mods = append(mods, path)
			}
		}
	}
	slices.Sort(mods)
	mods = slices.Compact(mods)
	assert.Contains(t, mods, "github.com/hashicorp/go-retryablehttp")
	for _, m := range mods {
		for _, heavy := range []string{"github.com/redis/go-redis", "github.com/spf13/cobra", "github.com/itchyny/gojq", "gitlab.com/gitlab-org/api/client-go", "go.opentelemetry.io",
			"github.com/modelcontextprotocol/go-sdk", "github.com/google/jsonschema-go"} {
			if strings.HasPrefix(m, heavy) {
				t.Errorf("a root-only program's module graph holds %s", m)
			}
		}
	}
	t.Logf("go mod graph: %d modules\n%s", len(mods), strings.Join(mods, "\n"))
}

// stderr is what a failed command printed on its standard error.
func stderr(err error) []byte {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.Stderr
	}
	return nil
}
