package main

import (
	"archive/zip"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var testMods = []module{
	{Dir: ".", Path: "example.com/lib"},
	{Dir: "sub", Path: "example.com/lib/sub"},
}

func TestSetVersions(t *testing.T) {
	gomod := "module example.com/lib/sub\n\nrequire (\n\texample.com/lib v0.1.0 // indirect\n\texample.com/library v1.2.3\n)\n\nrequire example.com/lib/sub v0.0.0-00010101000000-000000000000\n"
	got, changed := setVersions([]byte(gomod), testMods, "v0.2.0")
	want := "module example.com/lib/sub\n\nrequire (\n\texample.com/lib v0.2.0 // indirect\n\texample.com/library v1.2.3\n)\n\nrequire example.com/lib/sub v0.2.0\n"
	if !changed || string(got) != want {
		t.Errorf("setVersions = %v\n%s\nwant\n%s", changed, got, want)
	}
	if _, changed := setVersions(got, testMods, "v0.2.0"); changed {
		t.Error("setVersions changed a go.mod already at the version")
	}
	work := "go 1.25.0\n\nuse (\n\t.\n\t./sub\n)\n\nreplace example.com/lib v0.1.0 => ./\n"
	got, _ = setVersions([]byte(work), testMods, "v0.2.0")
	if want := strings.Replace(work, "v0.1.0", "v0.2.0", 1); string(got) != want {
		t.Errorf("go.work: got\n%s\nwant\n%s", got, want)
	}
	if !hasReplace([]byte("module m\nreplace (\n\ta => ../a\n)\n")) || hasReplace([]byte("module m\n// replace a => ../a\n")) {
		t.Error("hasReplace is wrong")
	}
}

func TestVersions(t *testing.T) {
	for _, bad := range []string{"0.1.0", "v1", "v01.2.3", "v1.2.3+meta", ""} {
		if _, err := parseVersion(bad); err == nil {
			t.Errorf("parseVersion(%q) accepted it", bad)
		}
	}
	v := func(s string) version {
		t.Helper()
		x, err := parseVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	if !v("v0.1.0").less(v("v0.1.1")) || !v("v0.2.0-rc.1").less(v("v0.2.0")) || v("v1.0.0").less(v("v0.9.9")) {
		t.Error("less orders versions wrongly")
	}
	for _, c := range []struct {
		old, next string
		ok        bool
	}{{"v0.1.0", "v0.1.1", false}, {"v0.1.0", "v0.2.0", true}, {"v1.2.0", "v1.3.0", false}, {"v1.2.0", "v2.0.0", true}} {
		if got := v(c.next).allowsBreaking(v(c.old)); got != c.ok {
			t.Errorf("%s after %s allows breaking: %v, want %v", c.next, c.old, got, c.ok)
		}
	}
	if tagName(testMods[1], "v0.1.0") != "sub/v0.1.0" || tagName(testMods[0], "v0.1.0") != "v0.1.0" {
		t.Error("tagName is wrong")
	}
}

// writeRepo writes files under a new directory and makes it a git
// repository with one commit.
func writeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	git(t, dir, "init", "-q")
	commitAll(t, dir)
	return dir
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func commitAll(t *testing.T, dir string) {
	t.Helper()
	git(t, dir, "add", "-A")
	git(t, dir, "-c", "user.name=test", "-c", "user.email=test@example.com", "commit", "-q", "-m", "test")
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	if _, err := gitOutput(dir, args...); err != nil {
		t.Fatal(err)
	}
}

func TestModuleZip(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	root := writeRepo(t, map[string]string{
		"go.work":                   "go 1.25.0\n\nuse (\n\t.\n\t./sub\n)\n",
		"go.mod":                    "module example.com/lib\n",
		"LICENSE":                   "MIT\n",
		"lib.go":                    "package lib\n",
		"internal/x/x.go":           "package x\n",
		"testdata/mod/go.mod":       "module testmod\n",
		"testdata/mod/m.go":         "package m\n",
		"testdata/data.txt":         "kept\n",
		"vendor/modules.txt":        "# kept\n",
		"vendor/example.com/v/v.go": "package v\n",
		"sub/go.mod":                "module example.com/lib/sub\n\nrequire example.com/lib v0.0.1\n",
		"sub/sub.go":                "package sub\n\nimport _ \"example.com/lib/internal/x\"\n",
		"sub/deeper/nested/go.mod":  "module example.com/lib/sub/deeper/nested\n",
		"sub/deeper/nested/n.go":    "package nested\n",
		"sub/deeper/d.go":           "package deeper\n",
	})
	if _, err := newRelease(root, "v0.1.0", &bytes.Buffer{}); err == nil {
		t.Fatal("a release with no CHANGELOG.md section went ahead")
	}
	writeFiles(t, root, map[string]string{"CHANGELOG.md": "# Changelog\n\n## v0.1.0\n\nFirst.\n"})
	r, err := newRelease(root, "", &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if r.version != "v0.1.0" || !slices.Equal(r.t.modules, testMods) {
		t.Fatalf("version %s, modules %v", r.version, r.t.modules)
	}
	checkZips(t, r)
	if err := r.stage(); err == nil || !strings.Contains(err.Error(), "sub/sub.go (module example.com/lib/sub) imports example.com/lib/internal/x") {
		t.Errorf("stage did not find the internal import across modules: %v", err)
	}
	if got := string(r.t.override["sub/go.mod"]); !strings.Contains(got, "example.com/lib v0.1.0") {
		t.Errorf("sub/go.mod not set to the version:\n%s", got)
	}
}

// checkZips writes the proxy of r's modules and checks what their zips hold.
func checkZips(t *testing.T, r *release) {
	t.Helper()
	proxy := t.TempDir()
	if err := writeProxy(proxy, r.t, r.t.modules, r.version); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"example.com/lib":     {"LICENSE", "go.mod", "go.work", "internal/x/x.go", "lib.go", "testdata/data.txt", "vendor/modules.txt"},
		"example.com/lib/sub": {"LICENSE", "deeper/d.go", "go.mod", "sub.go"},
	}
	for _, m := range r.t.modules {
		got := zipNames(t, filepath.Join(proxy, m.Path, "@v", "v0.1.0.zip"), m.Path+"@v0.1.0/")
		if !slices.Equal(got, want[m.Path]) {
			t.Errorf("%s's zip holds %q, want %q", m.Path, got, want[m.Path])
		}
	}
}

// zipNames returns the files of a module zip, without their prefix, which
// every entry must have.
func zipNames(t *testing.T, name, prefix string) []string {
	t.Helper()
	zr, err := zip.OpenReader(name)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		n, ok := strings.CutPrefix(f.Name, prefix)
		if !ok {
			t.Errorf("%s: entry %s outside %s", name, f.Name, prefix)
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// TestCreateTagsAllOrNone checks that a tag that cannot be made undoes
// those made before it.
func TestCreateTagsAllOrNone(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git:", err)
	}
	for _, k := range []string{"GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"} {
		t.Setenv(k, "test")
	}
	for _, k := range []string{"GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(k, "test@example.com")
	}
	root := writeRepo(t, map[string]string{"go.mod": "module example.com/lib\n"})
	r := &release{t: &tree{root: root}, out: &bytes.Buffer{}}
	if err := r.createTags([]string{"v0.0.1", "sub/v0.0.1"}); err != nil {
		t.Fatal(err)
	}
	git(t, root, "tag", "-d", "v0.0.1", "sub/v0.0.1")
	git(t, root, "tag", "sub/v0.1.0") // taken already
	if err := r.createTags([]string{"v0.1.0", "other/v0.1.0", "sub/v0.1.0"}); err == nil {
		t.Fatal("createTags made a tag that exists")
	}
	out, err := gitOutput(root, "tag", "--list")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(out)); !slices.Equal(got, []string{"sub/v0.1.0"}) {
		t.Errorf("after a failed createTags the tags are %q, want only the one that was there", got)
	}
}
