// Command release cuts a release of every module of this repository at one
// version: the root module tagged vX.Y.Z, each nested module dir/vX.Y.Z.
//
//	go run ./internal/cmd/release dryrun [vX.Y.Z]
//	go run ./internal/cmd/release api [-v] [vX.Y.Z]
//	go run ./internal/cmd/release tag [-push REMOTE] vX.Y.Z
//
// dryrun serves the modules, as the tags would hold them, from a file-based
// module proxy, and in a scratch module outside the repository (GOWORK=off,
// no replace) gets each library module alone and builds a program with it,
// checks a root-only program's module graph, and installs the commands
// (collab, collabfake) and runs them. It needs no tag. It also refuses a
// replace directive in any go.mod, and an import of another module's
// internal package.
//
// api compares the exported API of each library module with its last
// release tag (apidiff): an incompatible change fails unless the version
// moves as semver asks and CHANGELOG.md lists it under "Breaking changes".
// Before the first tag, it reports the API the first release would freeze:
// the number of exported declarations of each package, or with -v each one.
//
// tag runs both, sets the version in every require of a sibling module and
// in go.work, commits that, and creates every tag or none; -push pushes them
// with git push --atomic. The version defaults to the newest one that
// CHANGELOG.md names; tag wants it to be that one. bench and
// examples/webhook-bot are not published (see unpublished).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
)

// unpublished are the workspace's modules that no release tags, and why.
var unpublished = map[string]string{
	"bench":                "benchmarks, with the libraries they compare against: nothing to import",
	"examples/webhook-bot": "an example to read and copy; its Prometheus exporter belongs in no user's graph",
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("release: ")
	if err := run(os.Args[1:]); err != nil {
		log.Fatal(err)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	push := fs.String("push", "", "after tagging, push the tags to this remote, all or none (git push --atomic)")
	keep := fs.Bool("keep", false, "keep the scratch directory of the dry run, and print where it is")
	verbose := fs.Bool("v", false, "before a module's first release, list every exported declaration it would freeze, not a count per package")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: release dryrun|api|tag [-push REMOTE] [-keep] [-v] [vX.Y.Z]")
		fs.PrintDefaults()
	}
	if len(args) == 0 {
		fs.Usage()
		return errors.New("no subcommand")
	}
	cmd := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q: flags come before the version", fs.Args()[1:])
	}
	top, err := gitOutput(".", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	r, err := newRelease(strings.TrimSpace(string(top)), fs.Arg(0), os.Stdout)
	if err != nil {
		return err
	}
	r.keep, r.verbose = *keep, *verbose
	switch cmd {
	case "dryrun":
		return r.dryRun()
	case "api":
		return r.apiGate()
	case "tag":
		return r.tag(*push)
	}
	fs.Usage()
	return fmt.Errorf("unknown subcommand %q", cmd)
}

// A release is one version of the repository's modules being cut.
type release struct {
	t         *tree
	version   string
	changelog changelog
	keep      bool
	verbose   bool      // list the surface a first release freezes, not count it
	out       io.Writer // where the steps and reports are printed
}

// newRelease loads the repository at root at the version given, or at the
// newest version CHANGELOG.md names.
func newRelease(root, v string, out io.Writer) (*release, error) {
	t, err := loadTree(root)
	if err != nil {
		return nil, err
	}
	cl, err := readChangelog(filepath.Join(t.root, "CHANGELOG.md"))
	if err != nil {
		return nil, err
	}
	if v == "" {
		v = cl.newest()
	}
	if _, err := parseVersion(v); err != nil {
		return nil, err
	}
	if cl.section(v) == "" {
		return nil, fmt.Errorf("CHANGELOG.md has no section for %s: write it before the release", v)
	}
	return &release{t: t, version: v, changelog: cl, out: out}, nil
}

// published returns the modules the release tags.
func (r *release) published() []module {
	var mods []module
	for _, m := range r.t.modules {
		if _, skip := unpublished[m.Dir]; !skip {
			mods = append(mods, m)
		}
	}
	return mods
}

// stage sets the version in the tree's go.mod files and go.work (in memory:
// write does it on disk) and checks what a tag needs of them.
func (r *release) stage() error {
	var problems []string
	files := []string{"go.work"}
	for _, m := range r.t.modules {
		files = append(files, filepath.ToSlash(filepath.Join(m.Dir, "go.mod")))
	}
	for _, f := range files {
		text, err := r.t.read(f)
		if err != nil {
			return err
		}
		text, changed := setVersions(text, r.published(), r.version)
		if changed {
			r.t.override[f] = text
		}
		if f != "go.work" && hasReplace(text) {
			problems = append(problems, f+" has a replace directive, which its users' builds ignore and go install refuses")
		}
	}
	crossings, err := internalCrossings(r.t)
	if err != nil {
		return err
	}
	problems = append(problems, crossings...)
	if len(problems) > 0 {
		return fmt.Errorf("the modules cannot be released as they are:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

func (r *release) logf(format string, args ...any) {
	fmt.Fprintf(r.out, format+"\n", args...)
}
