package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/bot"
	"github.com/collabsvc/collab/collabtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExactlyOnceAcrossRestart: a crash report opened while the bot is down,
// and a /close posted then, are handled once each after the restart, and
// nothing handled before it is handled again.
func TestExactlyOnceAcrossRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, dir := collabtest.NewTestServer(t), t.TempDir()
	pid, bob := srv.AddProject(srv.AdminID, "app", 20), srv.AddUser("bob", false).ID
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	require.NoError(t, err)
	var live atomic.Pointer[bot.Bot] // nil while the bot is down: deliveries fail then
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b := live.Load(); b != nil {
			b.ServeHTTP(w, r)
		} else {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer front.Close()
	_, _, err = c.Hooks.Add(ctx, pid, &collab.AddHookOptions{URL: front.URL, IssuesEvents: collab.Ptr(true), NoteEvents: collab.Ptr(true)})
	require.NoError(t, err)
	run := func(act func()) {
		b, err := newBot(c, dir, pid)
		require.NoError(t, err)
		bctx, stop := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- b.Run(bctx) }()
		live.Store(b)
		act()
		require.NoError(t, srv.Settle(ctx, b))
		live.Store(nil)
		stop()
		require.NoError(t, <-done)
	}
	var first int
	run(func() { first = srv.AddIssue(pid, bob, "Crash on start"); srv.AddIssue(pid, bob, "Typo") })
	second := srv.AddIssue(pid, bob, "Crash in settings") // while the bot is down
	srv.AddNote(pid, "Issue", first, bob, "Thanks!\n/close")
	run(func() {})
	for _, id := range []int{first, second} {
		notes, _, err := c.Notes.ListIssueNotes(ctx, pid, id, nil)
		require.NoError(t, err)
		thanks := 0
		for _, n := range notes {
			if n.Body == "Thanks, triaging" {
				thanks++
			}
		}
		is, _, err := c.Issues.Get(ctx, pid, id)
		require.NoError(t, err)
		assert.Equal(t, 1, thanks, "issue %d", id)
		assert.Equal(t, []string{"bug"}, is.Labels)
		assert.Equal(t, id == first, is.State == collab.IssueClosed)
	}
}
