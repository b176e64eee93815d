package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const libV1 = `package lib

// Version is the module's version.
const Version = "0.1.0"

// T is a thing.
type T struct{}

// Keep stays.
func (T) Keep() {}

// Gone is removed in the next version.
func (T) Gone() {}
`

// TestAPIGateFailsOnRemovedMethod tags a module, removes an exported method,
// and checks that the gate refuses the change in a patch version, refuses it
// in a minor version whose CHANGELOG entry does not list it, and lets it
// through once the entry lists it.
func TestAPIGateFailsOnRemovedMethod(t *testing.T) {
	if testing.Short() {
		t.Skip("runs apidiff through the go command")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	root := writeRepo(t, map[string]string{
		"go.work":      "go 1.25.0\n\nuse .\n",
		"go.mod":       "module example.com/lib\n\ngo 1.25.0\n",
		"lib.go":       libV1,
		"CHANGELOG.md": "# Changelog\n\n## v0.1.0\n\nFirst.\n",
	})
	var out bytes.Buffer
	verbose := false
	gate := func(changelog string) error {
		t.Helper()
		writeFiles(t, root, map[string]string{"CHANGELOG.md": changelog})
		r, err := newRelease(root, "", &out)
		if err != nil {
			t.Fatal(err)
		}
		r.verbose = verbose
		return r.apiGate()
	}
	if err := gate("# Changelog\n\n## v0.1.0\n\nFirst.\n"); err != nil {
		t.Fatalf("before the first tag: %v", err)
	}
	if !strings.Contains(out.String(), "freezes these 4 exported declarations") || !strings.Contains(out.String(), "  example.com/lib: 4\n") {
		t.Errorf("the surface report lacks the count per package:\n%s", out.String())
	}
	out.Reset()
	verbose = true
	if err := gate("# Changelog\n\n## v0.1.0\n\nFirst.\n"); err != nil {
		t.Fatalf("before the first tag, -v: %v", err)
	}
	verbose = false
	if !strings.Contains(out.String(), "freezes these 4 exported declarations") || !strings.Contains(out.String(), "example.com/lib.T.Gone") {
		t.Errorf("the surface report lacks the API:\n%s", out.String())
	}
	git(t, root, "tag", "v0.1.0")
	if err := gate("## v0.1.0\n\nFirst.\n"); err != nil {
		t.Fatalf("the tree as tagged, before the next entry: %v", err)
	}
	writeFiles(t, root, map[string]string{"lib.go": strings.Replace(libV1, `"0.1.0"`, `"0.1.1"`, 1)})
	if err := gate("## v0.1.1\n\nFixes.\n\n## v0.1.0\n"); err != nil {
		t.Fatalf("a patch release that only moves Version: %v", err)
	}
	writeFiles(t, root, map[string]string{"lib.go": strings.Replace(libV1, "func (T) Gone() {}", "func (T) gone() {}", 1)})

	err := gate("## v0.1.1\n\nFixes.\n\n## v0.1.0\n")
	if err == nil || !strings.Contains(err.Error(), "must move to v0.2.0") {
		t.Errorf("a removed method in a patch version: %v", err)
	}
	if !strings.Contains(out.String(), "Gone: removed") {
		t.Errorf("the gate does not say what changed:\n%s", out.String())
	}
	err = gate("## v0.1.0\n\nFirst.\n")
	if err == nil || !strings.Contains(err.Error(), "must move to v0.2.0") {
		t.Errorf("a removed method while the changelog still names the released version: %v", err)
	}
	err = gate("## v0.2.0\n\nNew.\n\n## v0.1.0\n")
	if err == nil || !strings.Contains(err.Error(), `no "Breaking changes" list naming`) {
		t.Errorf("a removed method that CHANGELOG.md does not list: %v", err)
	}
	err = gate("## v0.2.0\n\n### Breaking changes\n\n- `example.com/lib`: T.Gone is removed.\n\n## v0.1.0\n")
	if err != nil {
		t.Errorf("a removed method, in a minor version that lists it: %v", err)
	}
}
