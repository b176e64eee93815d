package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// dryRun proves the release without tagging: the modules served from a file
// proxy at the version, used from a scratch module as users would.
func (r *release) dryRun() error {
	if err := r.stage(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "collab-release-")
	if err != nil {
		return err
	}
	if r.keep {
		r.logf("scratch directory: %s", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	proxy := filepath.Join(dir, "proxy")
	if err := writeProxy(proxy, r.t, r.published(), r.version); err != nil {
		return err
	}
	r.logf("file proxy %s serves %s at %s", proxy, strings.Join(paths(r.published()), ", "), r.version)
	s, err := newScratch(filepath.Join(dir, "scratch"), proxy, r.logf)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	for _, tr := range trials {
		if err := s.try(tr, r.version); err != nil {
			return err
		}
	}
	cli, ok := r.module(cliModule)
	if !ok {
		return fmt.Errorf("no module at %s", cliModule)
	}
	if err := s.tryCommands(cli.Path, r.t.modules[0].Path+"/"+fakeCommand, r.version); err != nil {
		return err
	}
	r.logf("dry run of %s: passed", r.version)
	return nil
}

// module returns the workspace's module at dir.
func (r *release) module(dir string) (module, bool) {
	for _, m := range r.t.modules {
		if m.Dir == dir {
			return m, true
		}
	}
	return module{}, false
}

// libraries are the published modules other than the command: those whose
// exported API the release promises.
func (r *release) libraries() []module {
	var mods []module
	for _, m := range r.published() {
		if m.Dir != cliModule {
			mods = append(mods, m)
		}
	}
	return mods
}

func paths(mods []module) []string {
	var ps []string
	for _, m := range mods {
		ps = append(ps, m.Path)
	}
	return ps
}

// tag cuts the release: the checks, then the versions written and committed,
// then every tag or none.
func (r *release) tag(remote string) error {
	if newest := r.changelog.newest(); newest != r.version {
		return fmt.Errorf("CHANGELOG.md's newest entry is %s, not %s", newest, r.version)
	}
	if out, err := gitOutput(r.t.root, "status", "--porcelain"); err != nil || len(out) > 0 {
		return fmt.Errorf("the work tree is not clean (%v): commit first, so that the tags hold what was checked\n%s", err, out)
	}
	var tags []string
	for _, m := range r.published() {
		name := tagName(m, r.version)
		if _, err := gitOutput(r.t.root, "rev-parse", "-q", "--verify", "refs/tags/"+name); err == nil {
			return fmt.Errorf("tag %s exists already", name)
		}
		tags = append(tags, name)
	}
	if err := r.dryRun(); err != nil {
		return err
	}
	if err := r.apiGate(); err != nil {
		return err
	}
	if err := r.commitVersions(); err != nil {
		return err
	}
	if err := r.createTags(tags); err != nil {
		return err
	}
	if remote == "" {
		r.logf("tagged; publish with: git push --atomic origin %s", strings.Join(tags, " "))
		return nil
	}
	_, err := gitOutput(r.t.root, append([]string{"push", "--atomic", remote}, tags...)...)
	return err
}

// commitVersions writes the go.mod and go.work files stage rewrote, and
// commits them.
func (r *release) commitVersions() error {
	var files []string
	for f, text := range r.t.override {
		if err := os.WriteFile(filepath.Join(r.t.root, filepath.FromSlash(f)), text, 0o644); err != nil {
			return err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil
	}
	if _, err := gitOutput(r.t.root, append([]string{"add", "--"}, files...)...); err != nil {
		return err
	}
	msg := "release " + r.version + ": the modules require their siblings at " + r.version
	_, err := gitOutput(r.t.root, append([]string{"commit", "-m", msg, "--"}, files...)...)
	return err
}

// createTags creates every tag at HEAD, or, when one fails, deletes those
// it made.
func (r *release) createTags(tags []string) error {
	for i, name := range tags {
		if _, err := gitOutput(r.t.root, "tag", "-a", "-m", name, name); err != nil {
			for _, made := range tags[:i] {
				if _, derr := gitOutput(r.t.root, "tag", "-d", made); derr != nil {
					err = fmt.Errorf("%w; deleting %s: %v", err, made, derr)
				}
			}
			return err
		}
	}
	return nil
}
