package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestScenario plays the scenario against the embedded fake server and
// checks what the bot did.
func TestScenario(t *testing.T) {
	t.Setenv("COLLAB_URL", "")
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{
		`bot: #1 "Crash on save": labelled ~needs-triage and commented`,
		`bot: #2 "Search is slow" already has labels performance: left alone`,
		"bot: #1 closed on /close from @alice",
		"the bot stopped with 1 event(s) accepted and not handled",
		`bot: #3 "Export is empty": labelled ~needs-triage and commented`,
		`bot: #4 "Login fails": labelled ~needs-triage and commented`,
		"bot: #2 closed on /close from @alice",
		"bot: !1: build rspec (#",
		"catch-up found 3 missed event(s)",
		"nothing was lost:",
		"0 dropped, 0 dead-lettered",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestLiveMode runs the bot as against a real server (the fake stands in),
// until its context ends; it must then remove its hook.
func TestLiveMode(t *testing.T) {
	srv := collabtest.NewTestServer(t)
	pid := srv.Seed.Project(srv.Admin, "Webshop", collab.InternalVisibility).ID
	t.Setenv("COLLAB_URL", srv.URL)
	t.Setenv("COLLAB_TOKEN", srv.AdminToken)
	t.Setenv("COLLAB_PROJECT", strconv.Itoa(pid))
	t.Setenv("COLLAB_BOT_USER", "root")
	t.Setenv("WEBHOOK_BOT_QUEUE", t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(ctx, pw); pw.Close() }()
	lines := bufio.NewScanner(pr)
	next := func() string {
		if !lines.Scan() {
			t.Fatalf("output ended: %v", lines.Err())
		}
		return lines.Text()
	}
	if l := next(); !strings.Contains(l, "registered") {
		t.Fatalf("first line %q", l)
	}
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Crash"}); err != nil {
		t.Fatal(err)
	}
	if l := next(); l != `bot: #1 "Crash": labelled ~needs-triage and commented` {
		t.Fatalf("reaction %q", l)
	}
	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	hooks, _, err := c.Hooks.List(context.Background(), pid, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 0 {
		t.Fatalf("%d hook(s) left", len(hooks))
	}
}

func TestLiveModeNeedsProject(t *testing.T) {
	t.Setenv("COLLAB_URL", "http://127.0.0.1:1")
	t.Setenv("COLLAB_TOKEN", "t")
	t.Setenv("COLLAB_PROJECT", "")
	if err := run(context.Background(), io.Discard); err == nil || !strings.Contains(err.Error(), "COLLAB_PROJECT") {
		t.Fatalf("got %v", err)
	}
}
