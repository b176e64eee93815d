package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

func TestMain(m *testing.M) {
	if n := os.Getenv(fakeIssuesEnv); n != "" {
		os.Exit(serveFakeIssues(n))
	}
	testscript.Main(m, map[string]func(){"collab": main})
}

// serverKey finds the script's fake server among the testscript values.
type serverKey struct{}

// TestScripts runs testdata/script/*.txtar against a fresh fake server each.
// A script finds COLLAB_URL and COLLAB_TOKEN set, and a project at
// $PROJECT owned by the administrator.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			srv, err := collabtest.NewServer()
			if err != nil {
				return err
			}
			env.Defer(srv.Close)
			p := srv.Seed.Project(srv.Admin, "demo", collab.PrivateVisibility)
			if err := srv.Err(); err != nil {
				return err
			}
			env.Values[serverKey{}] = srv
			env.Values[projectKey{}] = p
			env.Values[scriptTestKey{}] = env.T()
			env.Values[blockedKey{}] = &blockedListener{}
			env.Setenv("COLLAB_URL", srv.URL)
			env.Setenv("COLLAB_TOKEN", srv.AdminToken)
			env.Setenv("PROJECT", strconv.Itoa(p.ID))
			// collab auth keeps its hosts file in the script's own directory.
			env.Setenv("COLLAB_CONFIG_DIR", filepath.Join(env.WorkDir, "config"))
			// Token files for --token-file: the private and the OAuth token.
			for name, tok := range map[string]string{"token.txt": srv.AdminToken, "oauth.txt": srv.AdminOAuthToken} {
				if err := os.WriteFile(filepath.Join(env.WorkDir, name), []byte(tok+"\n"), 0o600); err != nil {
					return err
				}
			}
			return nil
		},
		Cmds: scriptCmds(),
	})
}

// extraCmds are script commands that only some platforms have.
var extraCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){}

func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"seed-issues":     cmdSeedIssues,
		"freeport":        cmdFreePort,
		"wait-listening":  cmdWaitListening,
		"wait-deliveries": cmdWaitDeliveries,
		"wait-drained":    cmdWaitDrained,
		"lines":           cmdLines,
		"capture":         cmdCapture,
		"hook-token":      cmdHookToken,
		"add-user":        cmdAddUser,
		"same-deliveries": cmdSameDeliveries,
		"rate-limit":      cmdRateLimit,
		"count-status":    cmdCountStatus,
		"cmp-times":       cmdCmpTimes,
		"seed-world":      cmdSeedWorld,
		"exits":           cmdExits,
		"mode-0600":       cmdMode0600,
	}
	for name, f := range extraCmds {
		cmds[name] = f
	}
	return cmds
}

func server(ts *testscript.TestScript) *collabtest.Server {
	return ts.Value(serverKey{}).(*collabtest.Server)
}

// projectKey holds the script's project, $PROJECT.
type projectKey struct{}

// project is the script's project, $PROJECT, as the fake seeded it.
func project(ts *testscript.TestScript) *collab.Project {
	return ts.Value(projectKey{}).(*collab.Project)
}

// seed-issues N adds N issues, titled "issue 1" to "issue N", to $PROJECT.
func cmdSeedIssues(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: seed-issues N")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	srv, p := server(ts), project(ts)
	for i := 1; i <= n; i++ {
		srv.Seed.Issue(p, srv.Admin, "issue "+strconv.Itoa(i))
	}
	ts.Check(srv.Err())
}

// handedOut holds the addresses freeport has given in this process: the
// kernel may offer a port again once it is closed, and two scripts running
// in parallel must never share one (one would reach the other's server).
var handedOut sync.Map

// freeport VAR sets VAR to a loopback address with a free port, one that no
// other script of this process was given.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		addr := l.Addr().String()
		ts.Check(l.Close())
		if _, given := handedOut.LoadOrStore(addr, true); !given {
			ts.Setenv(args[0], addr)
			return
		}
	}
}

// waitLimit bounds how long a script waits for something to happen; it is
// a guard against a hang, not a speed check.
const waitLimit = 60 * time.Second

// wait-listening ADDR waits until something accepts connections at ADDR.
func cmdWaitListening(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: wait-listening ADDR")
	}
	deadline := time.Now().Add(waitLimit)
	for {
		c, err := net.Dial("tcp", args[0])
		if err == nil {
			ts.Check(c.Close())
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("nothing listens at %s: %v", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wait-deliveries N [STATUS] waits until the fake server has made N
// webhook delivery attempts and its delivery queue is empty. With STATUS,
// every attempt must have been answered with it.
func cmdWaitDeliveries(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: wait-deliveries N [STATUS]")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	srv := server(ts)
	_, err = srv.WaitDeliveries(ctx, n)
	ts.Check(err)
	ts.Check(srv.WaitIdle(ctx))
	if len(args) == 2 {
		for _, d := range srv.Deliveries() {
			if strconv.Itoa(d.Status) != args[1] {
				ts.Fatalf("a delivery was answered %d %s, not %s", d.Status, d.Err, args[1])
			}
		}
	}
}

// wait-drained QUEUE [FLAG...] waits until collab queue stats QUEUE reports
// depth 0: every delivery stored there is handled (a listener's line is
// written). A listener stopped before then leaves the rest in the queue,
// for its next start, as it promises; a script that expects the lines from
// this run waits for them first.
func cmdWaitDrained(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: wait-drained QUEUE [FLAG...]")
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	stats := append(append([]string{"queue", "stats"}, args...), "--json")
	for {
		var out, errOut bytes.Buffer
		if code := run(ctx, stats, stdio{in: strings.NewReader(""), out: &out, err: &errOut}); code != 0 {
			ts.Fatalf("collab queue stats: exit %d: %s", code, errOut.String())
		}
		if strings.Contains(out.String(), `"depth":0,`) {
			return
		}
		select {
		case <-ctx.Done():
			ts.Fatalf("the queue still holds deliveries after %v: %s", waitLimit, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lines N FILE checks that FILE (or stdout, stderr) has exactly N lines.
func cmdLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: lines N FILE")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := strings.Count(ts.ReadFile(args[1]), "\n")
	if (got == want) == neg {
		ts.Fatalf("%s has %d lines; want %d (negated: %v)", args[1], got, want, neg)
	}
}

// capture VAR sets VAR to the last command's standard output, trimmed.
func cmdCapture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: capture VAR")
	}
	ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
}

// hook-token ID TOKEN gives the fake's hook ID a secret token.
func cmdHookToken(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hook-token ID TOKEN")
	}
	id, err := strconv.Atoi(args[0])
	ts.Check(err)
	ts.Check(server(ts).SetHookToken(id, args[1]))
}

// same-deliveries A B checks that two files of collab hook listen lines
// hold the same deliveries in the same order: kind, event header and body
// byte for byte. It fails on an empty file.
func cmdSameDeliveries(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: same-deliveries A B")
	}
	read := func(name string) []string {
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(ts.ReadFile(name)), "\n") {
			var ev eventLine
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				ts.Fatalf("%s: %v in %q", name, err, l)
			}
			out = append(out, string(ev.Kind)+" | "+ev.Headers.Get("X-Gitlab-Event")+" | "+string(ev.Body))
		}
		return out
	}
	a, b := read(args[0]), read(args[1])
	if len(a) == 0 || strings.Join(a, "\n") != strings.Join(b, "\n") {
		ts.Fatalf("%s and %s differ:\n%s\n---\n%s", args[0], args[1], strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

// add-user NAME VAR adds a user who is not an administrator, and sets VAR
// to the user's id.
func cmdAddUser(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: add-user NAME VAR")
	}
	u := server(ts).AddUser(args[0], false)
	ts.Check(server(ts).Err())
	ts.Setenv(args[1], strconv.Itoa(u.ID))
}

// rate-limit RPS BURST limits every token of the fake to RPS requests a
// second (0 lifts the limit), and empties its request log.
func cmdRateLimit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: rate-limit RPS BURST")
	}
	rps, err := strconv.ParseFloat(args[0], 64)
	ts.Check(err)
	burst, err := strconv.Atoi(args[1])
	ts.Check(err)
	server(ts).SetRateLimit(rps, burst)
	server(ts).ClearRequests()
}

// count-status STATUS N checks that the fake answered exactly N requests
// (at least N with !) with STATUS since the last rate-limit.
func cmdCountStatus(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: count-status STATUS N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	got := 0
	for _, r := range server(ts).Requests() {
		if strconv.Itoa(r.Status) == args[0] {
			got++
		}
	}
	if (!neg && got != want) || (neg && got < want) {
		ts.Fatalf("%d requests answered %s; want %s%d", got, args[0], map[bool]string{true: "at least ", false: ""}[neg], want)
	}
}

// goldenDir holds the expected outputs of cmp-times, as an absolute path:
// a script runs in its own directory.
var goldenDir = func() string {
	d, err := filepath.Abs(filepath.Join("testdata", "golden"))
	if err != nil {
		panic(err)
	}
	return d
}()

// timestamp matches the times the fake server stamps on records.
var timestamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)

// updateGolden rewrites the golden files of cmp-times with what the
// commands print now: go test -run TestScripts -update, then review the diff.
var updateGolden = flag.Bool("update", false, "rewrite testdata/golden from the script tests' output")

// cmp-times FILE GOLDEN compares FILE (or stdout, stderr) with the file
// testdata/golden/GOLDEN after replacing every timestamp in FILE with TIME
// and $COLLAB_URL with URL: records carry the time they were made, and the
// fake listens on a port of its own.
func cmdCmpTimes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmp-times FILE GOLDEN")
	}
	got := timestamp.ReplaceAllString(ts.ReadFile(args[0]), "TIME")
	got = strings.ReplaceAll(got, ts.Getenv("COLLAB_URL"), "URL")
	golden := filepath.Join(goldenDir, filepath.FromSlash(args[1]))
	if *updateGolden {
		ts.Check(os.MkdirAll(filepath.Dir(golden), 0o755))
		ts.Check(os.WriteFile(golden, []byte(got), 0o644))
		return
	}
	b, err := os.ReadFile(golden)
	ts.Check(err)
	if want := string(b); got != want {
		ts.Fatalf("%s differs from %s:\n--- got\n%s--- want\n%s", args[0], args[1], got, want)
	}
}

// Fixed commit ids, so that golden outputs hold them.
const (
	masterCommit  = "1111111111111111111111111111111111111111"
	featureCommit = "2222222222222222222222222222222222222222"
)

// seed-world adds to $PROJECT what the typed commands need: the branches
// master and feature (at fixed commits) and fix, a merge request from feature, the
// user alice (a developer of the project; $ALICE is her id, $ALICE_TOKEN
// her token), and three
// builds of master: 1 succeeded with a trace and artifacts, 2 pending, 3
// failed. It sets $BUILD1 to $BUILD3 to their ids.
func cmdSeedWorld(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: seed-world")
	}
	srv, p := server(ts), project(ts)
	srv.Seed.BranchAt(p, "master", masterCommit)
	srv.Seed.BranchAt(p, "feature", featureCommit)
	srv.Seed.BranchAt(p, "fix", strings.Repeat("3", 40))
	alice := srv.Seed.User("alice")
	srv.Seed.Member(p, alice, collab.DeveloperAccess)
	srv.Seed.MergeRequest(p, alice, "feature", "master", "Add the feature")
	ts.Setenv("ALICE", strconv.Itoa(alice.ID))
	ts.Setenv("ALICE_TOKEN", alice.Token)
	for i, spec := range []collabtest.BuildSpec{
		{Status: "success", Commit: masterCommit, Trace: "building\nok\n", Artifacts: []byte("PK-artifacts")},
		{Status: "pending", Commit: masterCommit},
		{Status: "failed", Commit: masterCommit, Trace: "building\nFAIL\n"},
	} {
		ts.Setenv("BUILD"+strconv.Itoa(i+1), strconv.Itoa(srv.Seed.Build(p, spec).ID))
	}
	ts.Check(srv.Err())
}

// exits N PROG ARGS... runs PROG as exec does and checks that it exits
// with status N; its output is then stdout and stderr, as after exec.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// mode-0600 FILE checks that only its owner may read or write FILE.
func cmdMode0600(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mode-0600 FILE")
	}
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	if fi.Mode().Perm() != 0o600 {
		ts.Fatalf("%s has mode %v, want 0600", args[0], fi.Mode().Perm())
	}
}
