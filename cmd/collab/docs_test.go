package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// docsCLI is the page whose sessions TestDocsCLI runs.
const docsCLI = "../../docs/cli.md"

// docsAddr is the address the page's sessions show the fake at; the test
// runs its own fake on a free port and puts that in its place.
const docsAddr = "127.0.0.1:8081"

// TestDocsCLI runs every ```console block of docs/cli.md, in order, as one
// script against a fresh "collab fake --seed", the server the page says it
// used: each "$ collab ..." line must print what the page shows after it
// (standard output, then standard error; times compared as TIME) and exit
// as the page says ("; echo "exit $?"" shows the status, else it is 0).
// "$ export K=V" sets a variable, "$ K=V collab ..." sets it for one
// command, and "$ echo TEXT > FILE" writes a file.
func TestDocsCLI(t *testing.T) {
	script := docsScript(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "docs_cli.txtar"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := scriptCmds()
	cmds["cmp-shown"] = cmdCmpShown
	testscript.Run(t, testscript.Params{Dir: dir, RequireExplicitExec: true, Cmds: cmds})
}

// docsScript turns the console blocks of docs/cli.md into a testscript.
func docsScript(t *testing.T) string {
	f, err := os.Open(docsCLI)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var script, files strings.Builder
	script.WriteString("freeport ADDR\nexec collab fake --addr $ADDR --token demo-token --seed &fake&\nwait-listening $ADDR\n" +
		"env COLLAB_URL=http://$ADDR\nenv COLLAB_TOKEN=\nenv COLLAB_CONFIG_DIR=$WORK/config\n")
	var shown []string // output lines of the command being read
	n, commands := 0, 0
	var last string
	flush := func() {
		if last == "" {
			return
		}
		if strings.Contains(last, "exits ? ") {
			status := "?"
			if k := len(shown) - 1; k >= 0 && exitShown.MatchString(shown[k]) {
				status, shown = strings.TrimPrefix(shown[k], "exit "), shown[:k]
			}
			last = strings.Replace(last, "exits ? ", "exits "+status+" ", 1)
		}
		n++
		name := "shown" + strconv.Itoa(n)
		fmt.Fprintf(&script, "%scmp-shown %s\n", last, name)
		fmt.Fprintf(&files, "-- %s --\n%s", name, joinLines(shown))
		last, shown = "", nil
	}
	inBlock := false
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		switch {
		case strings.HasPrefix(text, "```console"):
			inBlock = true
			continue
		case inBlock && strings.HasPrefix(text, "```"):
			flush()
			inBlock = false
			continue
		case !inBlock:
			continue
		}
		cmd, isCmd := strings.CutPrefix(text, "$ ")
		if !isCmd {
			shown = append(shown, text)
			continue
		}
		cmd = strings.ReplaceAll(cmd, docsAddr, "$ADDR")
		flush()
		commands++
		step, err := scriptStep(cmd, &files)
		if err != nil {
			t.Fatalf("%s:%d: %v", docsCLI, line, err)
		}
		if strings.Contains(step, "exits ") {
			last = step
		} else {
			script.WriteString(step)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if commands < 20 {
		t.Fatalf("found %d commands in %s: the parser looks in the wrong place", commands, docsCLI)
	}
	script.WriteString("kill -INT fake\nwait fake\n")
	return script.String() + files.String()
}

var (
	exportLine = regexp.MustCompile(`^export (\w+)=(.*)$`)
	echoLine   = regexp.MustCompile(`^echo (\S+) > (\S+)$`)
	envPrefix  = regexp.MustCompile(`^(\w+)=(\S*) (collab .*)$`)
	// quoted is a single-quoted word: shell and testscript read it alike.
	quoted = regexp.MustCompile(`'[^']*'`)
)

// scriptStep is the script for one "$ ..." line: an env, a file, or an
// "exits N" line (with env lines around it) for the output check to follow.
func scriptStep(cmd string, files *strings.Builder) (string, error) {
	if m := exportLine.FindStringSubmatch(cmd); m != nil {
		return "env " + m[1] + "=" + m[2] + "\n", nil
	}
	if m := echoLine.FindStringSubmatch(cmd); m != nil {
		fmt.Fprintf(files, "-- %s --\n%s\n", m[2], m[1])
		return "", nil
	}
	var before, after string
	if m := envPrefix.FindStringSubmatch(cmd); m != nil {
		before, after, cmd = "env "+m[1]+"="+m[2]+"\n", "env "+m[1]+"=\n", m[3]
	}
	status := "0"
	if rest, ok := strings.CutSuffix(cmd, `; echo "exit $?"`); ok {
		cmd, status = rest, "?"
	}
	if rest, file, ok := strings.Cut(cmd, " < "); ok {
		cmd, before = rest, before+"stdin "+file+"\n"
	}
	bare := quoted.ReplaceAllString(cmd, "")
	if !strings.HasPrefix(cmd, "collab ") || strings.ContainsAny(bare, "|&;>`\"") || strings.Contains(bare, "$(") {
		return "", fmt.Errorf("a checked snippet runs collab alone, without a shell: %q", cmd)
	}
	// "?" becomes the status the output's last line "exit N" shows.
	return before + "exits " + status + " " + cmd + "\n" + after, nil
}

// joinLines ends every line with a newline.
func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// cmp-shown FILE compares the last command's standard output and standard
// error, in that order, with FILE, timestamps in both read as TIME and the
// fake's address as the page's.
func cmdCmpShown(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: cmp-shown FILE")
	}
	norm := func(s string) string {
		s = strings.ReplaceAll(s, ts.Getenv("ADDR"), docsAddr)
		return timestamp.ReplaceAllString(s, "TIME")
	}
	want := norm(ts.ReadFile(args[0]))
	got := norm(ts.ReadFile("stdout") + ts.ReadFile("stderr"))
	if got != want {
		ts.Fatalf("the page shows\n%s\nbut the command printed\n%s", want, got)
	}
}

// exitShown is the line that shows a command's status after
// `; echo "exit $?"`.
var exitShown = regexp.MustCompile(`^exit \d+$`)
