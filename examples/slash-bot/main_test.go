package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/webhook/catchup"
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
	hook := srv.AddReceiver(pid)
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	require.NoError(t, err)
	run := func(act func()) { // starts the bot, acts, settles, stops it
		b, err := newBot(c, dir, catchup.ID(pid))
		require.NoError(t, err)
		bctx, stop := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- b.Run(bctx) }()
		hook.Set(b)
		act()
		require.NoError(t, srv.Settle(ctx, b))
		hook.Set(nil)
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
		is, _, err := c.Issues.Get(ctx, pid, id)
		require.NoError(t, err)
		thanks := slices.DeleteFunc(notes, func(n *collab.Note) bool { return n.Body != "Thanks, triaging" })
		assert.Len(t, thanks, 1, "issue %d is thanked once", id)
		assert.Equal(t, []string{"bug"}, is.Labels)
		assert.Equal(t, id == first, is.State == collab.IssueClosed, "only the first is closed")
	}
}
