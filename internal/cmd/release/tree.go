package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// A module is one module of the workspace.
type module struct {
	Dir  string // slash path from the repository root; "." for the root
	Path string // module path
}

// A tree is the repository as the release would tag it: its tracked files,
// read from the work tree, with go.mod files rewritten for the version.
type tree struct {
	root     string
	files    []string          // tracked files, slash paths, sorted
	override map[string][]byte // rewritten contents, by file
	modules  []module          // the workspace's modules, root first
	modRoots map[string]bool   // every directory holding a go.mod, testdata included
}

// loadTree reads the tracked files and the workspace of the repository at root.
func loadTree(root string) (*tree, error) {
	out, err := gitOutput(root, "ls-files", "-z")
	if err != nil {
		return nil, err
	}
	t := &tree{root: root, override: map[string][]byte{}, modRoots: map[string]bool{}}
	for f := range strings.SplitSeq(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		// A symlink, or a file deleted and not yet committed, is in no zip.
		if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f))); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		t.files = append(t.files, f)
		if path.Base(f) == "go.mod" {
			t.modRoots[path.Dir(f)] = true
		}
	}
	sort.Strings(t.files)
	t.modules, err = workspaceModules(root)
	return t, err
}

// workspaceModules lists the modules that go.work uses, with their paths.
func workspaceModules(root string) ([]module, error) {
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	var mods []module
	for _, dir := range useDirs(work) {
		gomod, err := os.ReadFile(filepath.Join(root, dir, "go.mod"))
		if err != nil {
			return nil, err
		}
		p := modulePath(gomod)
		if p == "" {
			return nil, fmt.Errorf("%s/go.mod has no module line", dir)
		}
		mods = append(mods, module{Dir: dir, Path: p})
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Dir == "." || mods[j].Dir != "." && mods[i].Dir < mods[j].Dir })
	if len(mods) == 0 || mods[0].Dir != "." {
		return nil, fmt.Errorf("go.work does not use the root module")
	}
	return mods, nil
}

// useDirs returns the directories of go.work's use directives, cleaned.
func useDirs(work []byte) []string {
	var dirs []string
	inBlock := false
	for _, line := range lines(work) {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case inBlock && f[0] == ")":
			inBlock = false
		case inBlock:
			dirs = append(dirs, path.Clean(f[0]))
		case f[0] == "use" && len(f) > 1 && f[1] == "(":
			inBlock = true
		case f[0] == "use" && len(f) > 1:
			dirs = append(dirs, path.Clean(f[1]))
		}
	}
	return dirs
}

// modulePath returns the path on a go.mod's module line.
func modulePath(gomod []byte) string {
	for _, line := range lines(gomod) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// lines splits text into lines without their comments.
func lines(text []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		out = append(out, line)
	}
	return out
}

// read returns a file of the tree as the release would tag it.
func (t *tree) read(file string) ([]byte, error) {
	if b, ok := t.override[file]; ok {
		return b, nil
	}
	return os.ReadFile(filepath.Join(t.root, filepath.FromSlash(file)))
}

// owner returns the directory of the module a file belongs to: the deepest
// directory above it that holds a go.mod, as the go command decides.
func (t *tree) owner(file string) string {
	for dir := path.Dir(file); ; dir = path.Dir(dir) {
		if t.modRoots[dir] || dir == "." {
			return dir
		}
	}
}

// moduleFiles returns the files of the module at dir, as a module zip holds
// them: not those of nested modules (a testdata directory with a go.mod
// included), not vendored packages, and the root's LICENSE for a nested
// module that has none, as the go command adds it when it zips a tag.
func (t *tree) moduleFiles(dir string) []string {
	var files []string
	hasLicense := false
	for _, f := range t.files {
		if t.owner(f) != dir || isVendored(rel(dir, f)) {
			continue
		}
		files = append(files, f)
		hasLicense = hasLicense || rel(dir, f) == "LICENSE"
	}
	if dir != "." && !hasLicense && t.has("LICENSE") {
		files = append(files, "LICENSE")
	}
	return files
}

func (t *tree) has(file string) bool {
	i := sort.SearchStrings(t.files, file)
	return i < len(t.files) && t.files[i] == file
}

// rel returns file's path inside the module at dir; the root's LICENSE
// outside a nested module is its LICENSE.
func rel(dir, file string) string {
	if dir == "." {
		return file
	}
	if r, ok := strings.CutPrefix(file, dir+"/"); ok {
		return r
	}
	return path.Base(file)
}

// isVendored reports whether a file belongs to a vendored package, which a
// module zip leaves out (vendor/modules.txt stays).
func isVendored(name string) bool {
	var i int
	if strings.HasPrefix(name, "vendor/") {
		i = len("vendor/")
	} else if j := strings.Index(name, "/vendor/"); j >= 0 {
		i = j + len("/vendor/")
	} else {
		return false
	}
	return strings.Contains(name[i:], "/")
}

// gitOutput runs git in dir and returns its standard output.
func gitOutput(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}
