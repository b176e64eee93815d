package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// apidiff is the API comparer, pinned. go run fetches it through the module
// proxy: no module of the repository requires it.
const apidiff = "golang.org/x/exp/cmd/apidiff@v0.0.0-20261113113407-e3970619a1a4"

// apiGate compares each library module's API with its last release tag.
func (r *release) apiGate() error {
	next, err := parseVersion(r.version)
	if err != nil {
		return err
	}
	var failed []string
	for _, m := range r.libraries() {
		problem, err := r.checkModuleAPI(m, next)
		if err != nil {
			return err
		}
		if problem != "" {
			failed = append(failed, problem)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("API gate:\n  %s", strings.Join(failed, "\n  "))
	}
	return nil
}

// checkModuleAPI checks one module, and returns what fails in it.
func (r *release) checkModuleAPI(m module, next version) (string, error) {
	last, err := r.lastTag(m)
	if err != nil || last == nil {
		if err == nil {
			err = r.reportSurface(m)
		}
		return "", err
	}
	if next.less(*last) {
		return fmt.Sprintf("%s: %s is older than the last release, %s", m.Path, next, last), nil
	}
	changes, err := r.incompatible(m, tagName(m, last.String()))
	changes = slices.DeleteFunc(changes, func(c string) bool { return m.Dir == "." && c == versionChange(*last, next) })
	if err != nil || len(changes) == 0 {
		r.logf("%s: %s keeps the API of %s", m.Path, next, last)
		return "", err
	}
	r.logf("%s: incompatible with %s:\n%s", m.Path, last, strings.Join(changes, "\n"))
	switch {
	case !next.allowsBreaking(*last):
		return fmt.Sprintf("%s: %d incompatible changes since %s, so the version must move to v%d.%d.0 (or a new major), not %s",
			m.Path, len(changes), last, last.major, last.minor+1, next), nil
	case !names(r.changelog.breaking(r.version), m.Path):
		return fmt.Sprintf("%s: %d incompatible changes since %s, and CHANGELOG.md's %s entry has no \"Breaking changes\" list naming `%s`",
			m.Path, len(changes), last, r.version, m.Path), nil
	}
	return "", nil
}

// versionChange is apidiff's line for the root's Version constant moving
// from one release to the next: a change every release makes, not a break.
func versionChange(last, next version) string {
	return fmt.Sprintf("- Version: value changed from %q to %q", strings.TrimPrefix(last.String(), "v"), strings.TrimPrefix(next.String(), "v"))
}

// names reports whether text names the module path p by itself, not as
// the prefix of a longer path.
func names(text, p string) bool {
	return regexp.MustCompile(regexp.QuoteMeta(p) + `([^/\w.-]|$)`).MatchString(text)
}

// lastTag returns the newest release tag of m, or nil before the first.
func (r *release) lastTag(m module) (*version, error) {
	prefix := strings.TrimSuffix(tagName(m, ""), "/")
	if prefix != "" {
		prefix += "/"
	}
	out, err := gitOutput(r.t.root, "tag", "--list", prefix+"v*")
	if err != nil {
		return nil, err
	}
	var last *version
	for _, name := range strings.Fields(string(out)) {
		v, err := parseVersion(strings.TrimPrefix(name, prefix))
		if err == nil && (last == nil || last.less(v)) {
			last = &v
		}
	}
	return last, nil
}

// incompatible returns apidiff's incompatible changes of m since the tag.
func (r *release) incompatible(m module, tag string) ([]string, error) {
	dir, err := os.MkdirTemp("", "collab-api-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	old := filepath.Join(dir, "old")
	if err := extractTag(r.t.root, tag, old); err != nil {
		return nil, err
	}
	export := filepath.Join(dir, "old.x")
	if _, err := apidiffRun(old, m, "-m", "-w", export, m.Path); err != nil {
		return nil, fmt.Errorf("the API of %s: %w", tag, err)
	}
	out, err := apidiffRun(r.t.root, m, "-m", "-incompatible", export, m.Path)
	if err != nil {
		return nil, err
	}
	var changes []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "- ") {
			changes = append(changes, line)
		}
	}
	return changes, nil
}

// apidiffRun runs apidiff in module m of the tree at root. The root module
// is loaded alone; a nested one in the tree's workspace, as its siblings'
// versions may not be published yet.
func apidiffRun(root string, m module, args ...string) (string, error) {
	cmd := exec.Command("go", append([]string{"run", apidiff}, args...)...)
	cmd.Dir = filepath.Join(root, m.Dir)
	work := "off"
	if _, err := os.Stat(filepath.Join(root, "go.work")); err == nil && m.Dir != "." {
		work = filepath.Join(root, "go.work")
	}
	cmd.Env = append(os.Environ(), "GOWORK="+work)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("apidiff %s in %s: %v\n%s", strings.Join(args, " "), cmd.Dir, err, stderr.String())
	}
	return stdout.String(), nil
}

// extractTag writes the tree of a tag into dir.
func extractTag(repo, tag, dir string) error {
	out, err := gitOutput(repo, "archive", "--format=tar", tag)
	if err != nil {
		return err
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, dir+string(filepath.Separator)) || h.Typeflag != tar.TypeReg {
			continue // directories come with their files; links are in no module zip
		}
		if err := writeFrom(name, tr); err != nil {
			return err
		}
	}
}

func writeFrom(name string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
