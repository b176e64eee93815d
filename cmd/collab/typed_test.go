package main

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/collabsvc/collab/cmd/collab/internal/ops"
)

// TestEveryOperationScripted checks that every typed command is run by a
// script test, and that the commands of the registry are the ones the
// command tree has.
func TestEveryOperationScripted(t *testing.T) {
	files, err := filepath.Glob("testdata/script/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	var scripts strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		scripts.Write(b)
	}
	root := newRootCmd(stdio{})
	for _, op := range ops.All() {
		run := regexp.MustCompile(`(?m)^(exec|exits \d+|! exec) collab (--url \S+ )?` + regexp.QuoteMeta(op.Name()) + `( |$)`)
		if !run.MatchString(scripts.String()) {
			t.Errorf("no script runs collab %s", op.Name())
		}
		cmd, _, err := root.Find([]string{op.Noun, op.Verb})
		if err != nil || opOf(cmd) != op {
			t.Errorf("collab %s is not the command of its operation: %v", op.Name(), err)
		}
	}
}

func TestJoinJSONFields(t *testing.T) {
	root := newRootCmd(stdio{})
	for _, tc := range []struct{ in, want string }{
		{"issue list --json iid,title", "issue list --json=iid,title"},
		{"issue list --json", "issue list --json"},
		{"issue list --json nope", "issue list --json=nope"},   // no positional: reported as a field
		{"issue view --json 5", "issue view --json 5"},         // a number is the issue
		{"label delete --json bug", "label delete --json bug"}, // a label, not a field
		{"issue view 5 --json title", "issue view 5 --json=title"},
		{"api --json iid", "api --json iid"}, // not a typed command
	} {
		if got := strings.Join(joinJSONFields(root, strings.Fields(tc.in)), " "); got != tc.want {
			t.Errorf("joinJSONFields(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEscapeProjectPath(t *testing.T) {
	for in, want := range map[string]string{
		"projects/acme/webshop/issues":       "projects/acme%2Fwebshop/issues",
		"projects/acme/web.shop":             "projects/acme%2Fweb%2Eshop",
		"projects/acme/webshop?statistics=1": "projects/acme%2Fwebshop?statistics=1",
		"projects/42/issues":                 "projects/42/issues",
		"projects/acme%2Fwebshop/issues":     "projects/acme%2Fwebshop/issues",
		"projects/owned":                     "projects/owned",
		"projects/search/web":                "projects/search/web",
		"projects/fork/5":                    "projects/fork/5",
		"groups/acme/projects":               "groups/acme/projects",
		"projects/acme":                      "projects/acme",
	} {
		if got := escapeProjectPath(in); got != want {
			t.Errorf("escapeProjectPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProjectOfRemote(t *testing.T) {
	server := mustParse(t, "https://collab.example.com")
	for remote, want := range map[string]string{
		"https://collab.example.com/acme/webshop.git":        "acme/webshop",
		"https://collab.example.com/acme/webshop":            "acme/webshop",
		"ssh://git@collab.example.com:2222/acme/webshop.git": "acme/webshop",
		"git@collab.example.com:acme/webshop.git":            "acme/webshop",
		"collab.example.com:acme/webshop.git":                "acme/webshop",
		"https://github.com/acme/webshop.git":                "",
		"git@github.com:acme/webshop.git":                    "",
		"https://collab.example.com/webshop.git":             "",
		"/srv/git/acme/webshop.git":                          "",
	} {
		if got := projectOfRemote(remote, server); got != want {
			t.Errorf("projectOfRemote(%q) = %q, want %q", remote, got, want)
		}
	}
	sub := mustParse(t, "https://example.com/collab/")
	if got := projectOfRemote("https://example.com/collab/acme/webshop.git", sub); got != "acme/webshop" {
		t.Errorf("under a base path: %q", got)
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
