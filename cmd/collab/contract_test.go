package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/collabsvc/collab/cmd/collab/internal/ops"
	"github.com/collabsvc/collab/collabtest"
)

// TestEveryReadOnATerminalAndOffOne runs every view (see checkViews) and
// every list of the registry with
// one item or more, on a terminal and off one: off one, one line of
// tab-separated fields per item; on one, a header of the field names above
// the same rows, aligned; and --json holds as many records.
func TestEveryReadOnATerminalAndOffOne(t *testing.T) {
	srv := collabtest.NewTestServer(t)
	t.Setenv("COLLAB_URL", srv.URL)
	t.Setenv("COLLAB_TOKEN", srv.AdminToken)
	t.Setenv("COLLAB_CONFIG_DIR", t.TempDir())
	t.Setenv(repoEnv, "root/shop")
	mustRun := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCollab(t, args...)
		if code != 0 {
			t.Fatalf("collab %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		return strings.TrimRight(out, "\n")
	}
	pid := mustRun("project", "create", "--name", "shop", "--jq", ".id")
	project := atoi(t, pid)
	srv.AddBranch(project, "master", "")
	srv.AddBranch(project, "feature", "")
	srv.AddBuild(project, collabtest.BuildSpec{Status: "success", Trace: "ok\n"})
	mustRun("group", "create", "--name", "Acme", "--path", "acme")
	mustRun("label", "create", "bug", "--color", "#ff0000")
	milestone := mustRun("milestone", "create", "--title", "v1", "--jq", ".id")
	mustRun("issue", "create", "--title", "Crash", "--labels", "bug", "--milestone-id", milestone)
	mustRun("issue", "comment", "1", "--body", "Seen")
	note := mustRun("note", "list", "--issue", "1", "--jq", ".[0].id")
	mustRun("emoji", "add", "thumbsup", "--issue", "1")
	mustRun("emoji", "add", "tada", "--issue", "1", "--note", note)
	mustRun("mr", "create", "--source-branch", "feature", "--target-branch", "master", "--title", "Feature", "--description", "Closes #1")
	mustRun("mr", "comment", "1", "--body", "Nice")
	mustRun("hook", "create", "--url", "http://127.0.0.1:9/hook")
	mustRun("group", "transfer", "acme", "--project-id", pid)
	mustRun("project", "create", "--name", "tools")
	t.Setenv(repoEnv, "acme/shop")

	// The arguments a list needs, beyond the project.
	extra := map[string][]string{
		"project search":   {"shop"},
		"group projects":   {"acme"},
		"milestone issues": {milestone},
		"mr commits":       {"1"},
		"mr closes":        {"1"},
		"note list":        {"--issue", "1"},
		"emoji list":       {"--issue", "1", "--note", note},
		"member list":      {"--group", "acme"},
		"project list":     {"--scope", "all"},
	}
	t.Run("views", func(t *testing.T) { checkViews(t, mustRun) })
	for _, op := range ops.All() {
		if !op.List {
			continue
		}
		args := append([]string{op.Noun, op.Verb}, extra[op.Name()]...)
		t.Run(op.ID(), func(t *testing.T) {
			n := atoi(t, mustRun(append(args, "--json", "--jq", "length")...))
			if n == 0 {
				t.Fatalf("collab %s lists nothing; the test's world lacks what it lists", strings.Join(args, " "))
			}
			t.Setenv(forceTTYEnv, "0")
			tsv := lines(mustRun(args...))
			t.Setenv(forceTTYEnv, "1")
			table := lines(mustRun(args...))
			if len(tsv) != n || (n > 0 && len(table) != n+1) {
				t.Fatalf("%d records, %d TSV lines, %d table lines (want %d and %d)", n, len(tsv), len(table), n, n+1)
			}
			for _, row := range tsv {
				if got := strings.Count(row, "\t") + 1; got != len(op.Fields) {
					t.Errorf("TSV row %q has %d fields, want %d (%v)", row, got, len(op.Fields), op.Fields)
				}
			}
			if n > 0 {
				head := strings.Fields(table[0])
				first, _, _ := strings.Cut(op.Fields[0], ".")
				if len(head) != len(op.Fields) || head[0] != strings.ToUpper(first) {
					t.Errorf("table header %q, want the fields %v", table[0], op.Fields)
				}
			}
		})
	}
}

// lines splits trimmed output into lines; none for "".
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// checkViews runs every read of one record on a terminal and off one: a
// line per field of Fields, "field<TAB>value" off one, "field:" aligned on
// one.
func checkViews(t *testing.T, mustRun func(args ...string) string) {
	hook := mustRun("hook", "list", "--jq", ".[0].id")
	build := mustRun("build", "list", "--jq", ".[0].id")
	milestone := mustRun("milestone", "list", "--jq", ".[0].id")
	note := mustRun("note", "list", "--issue", "1", "--jq", ".[0].id")
	award := mustRun("emoji", "list", "--issue", "1", "--jq", ".[0].id")
	args := map[string][]string{
		"issue view": {"1"}, "mr view": {"1"}, "build view": {build}, "milestone view": {milestone},
		"project view": {}, "group view": {"acme"}, "member view": {"1"}, "branch view": {"master"},
		"hook view": {hook}, "emoji view": {award, "--issue", "1"}, "note view": {note, "--issue", "1"},
		"user view": {"1"},
	}
	for _, op := range ops.All() {
		if op.Writes || op.List || op.Record == nil {
			continue
		}
		extra, ok := args[op.Name()]
		if !ok && len(op.Args) > 0 {
			t.Errorf("%s: the test gives it no arguments", op.Name())
			continue
		}
		cmd := append([]string{op.Noun, op.Verb}, extra...)
		t.Setenv(forceTTYEnv, "0")
		tsv := lines(mustRun(cmd...))
		t.Setenv(forceTTYEnv, "1")
		tty := lines(mustRun(cmd...))
		if len(tsv) != len(op.Fields) || len(tty) != len(op.Fields) {
			t.Errorf("%s: %d TSV and %d terminal lines for %d fields", op.Name(), len(tsv), len(tty), len(op.Fields))
			continue
		}
		for i, f := range op.Fields {
			if !strings.HasPrefix(tsv[i], f+"\t") || !strings.HasPrefix(tty[i], f+": ") {
				t.Errorf("%s: line %d is %q off a terminal and %q on one, want field %s", op.Name(), i, tsv[i], tty[i], f)
			}
		}
	}
}
