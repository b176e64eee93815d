package mcptools

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the tool schema snapshots in testdata/toolsnaps")

// TestToolSnapshots holds every tool's description, schemas and hints
// against testdata/toolsnaps/NAME.json: a change fails until the
// snapshot is rewritten on purpose with go test -run TestToolSnapshots
// -update, and reviewed in the diff. A missing snapshot fails, and so does
// one left over from a tool that is gone.
func TestToolSnapshots(t *testing.T) {
	dir := filepath.Join("testdata", "toolsnaps")
	tools := newWorld(t, Selection{Toolsets: []string{"all"}}, nil).tools()
	seen := map[string]bool{}
	for _, tool := range tools {
		got, err := json.MarshalIndent(tool, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		file := filepath.Join(dir, tool.Name+".json")
		seen[tool.Name+".json"] = true
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s has no snapshot (go test -run TestToolSnapshots -update writes it): %v", tool.Name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s changed; if on purpose, run go test -run TestToolSnapshots -update and review the diff.\ngot:\n%s", tool.Name, got)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !seen[e.Name()] {
			if *update && strings.HasSuffix(e.Name(), ".json") {
				if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
					t.Fatal(err)
				}
				continue
			}
			t.Errorf("snapshot %s belongs to no tool", e.Name())
		}
	}
}
