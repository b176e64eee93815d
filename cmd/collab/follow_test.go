package main

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/runner"
)

// syncBuffer is a strings.Builder safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTraceFollow runs collab build trace --follow on a running build: it
// prints the log as the runner sends it, each part once, and ends when the
// build succeeds.
func TestTraceFollow(t *testing.T) {
	srv := collabtest.NewTestServer(t)
	p := srv.Seed.Project(srv.Admin, "ci", collab.PrivateVisibility)
	srv.Seed.Build(p, collabtest.BuildSpec{Status: "pending"})
	_, runnerToken := srv.AddRunner("test runner")
	rc, err := runner.NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := rc.RequestBuild(ctx, runnerToken, nil)
	if err != nil || b == nil {
		t.Fatalf("RequestBuild: %v, %v", b, err)
	}
	t.Setenv("COLLAB_URL", srv.URL)
	t.Setenv("COLLAB_TOKEN", srv.AdminToken)
	t.Setenv("COLLAB_FOLLOW_INTERVAL", "5ms")

	var out syncBuffer
	var errOut syncBuffer
	done := make(chan int)
	go func() {
		args := []string{"build", "trace", strconv.Itoa(b.ID), "--follow", "-R", strconv.Itoa(p.ID)}
		done <- run(ctx, args, stdio{in: strings.NewReader(""), out: &out, err: &errOut})
	}()
	send := func(state collab.BuildStatus, trace string) {
		t.Helper()
		if err := rc.UpdateBuild(ctx, b.ID, runnerToken, state, &trace); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(waitLimit)
		for out.String() != want {
			if time.Now().After(deadline) {
				t.Fatalf("printed %q, want %q (stderr %q)", out.String(), want, errOut.String())
			}
			select {
			case code := <-done:
				t.Fatalf("--follow ended (exit %d) having printed %q, want %q: %s", code, out.String(), want, errOut.String())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	send("", "step 1\n")
	waitFor("step 1\n")
	send("", "step 1\nstep 2\n")
	waitFor("step 1\nstep 2\n")
	select {
	case code := <-done:
		t.Fatalf("--follow ended (exit %d) while the build runs", code)
	case <-time.After(20 * time.Millisecond):
	}
	send(collab.BuildSuccess, "step 1\nstep 2\ndone\n")
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if got := out.String(); got != "step 1\nstep 2\ndone\n" {
		t.Errorf("printed %q", got)
	}
}
