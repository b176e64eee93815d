package main

import (
	"context"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/bot"
	"github.com/collabsvc/collab/collabtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStoppedAfterReply: stopped between a reply and its ack, the bot replies once.
func TestStoppedAfterReply(t *testing.T) {
	srv, dir := collabtest.NewTestServer(t), t.TempDir()
	p, bob := srv.Seed.Project(srv.Admin, "app", collab.PublicVisibility), srv.Seed.User("bob")
	hook, issue := srv.AddReceiver(p.ID), srv.Seed.Issue(p, bob, "Crash")
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	require.NoError(t, err)
	for run := range 2 {
		ctx, stop := context.WithCancel(t.Context())
		b, err := bot.New(bot.Options{Client: c, Dir: dir})
		require.NoError(t, err)
		b.Command("label", func(ctx context.Context, n *bot.Note, cmd bot.Command) error {
			if err := label(ctx, n, cmd); err != nil || run == 1 {
				return err
			}
			stop() // the reply is made: the bot stops before it acknowledges
			return context.Canceled
		})
		hook.Set(b)
		srv.Seed.IssueNote(issue, bob, "/label bug")
		go func() { assert.True(t, srv.Settle(ctx, b) == nil || run == 0); stop() }()
		require.NoError(t, b.Run(ctx))
	}
	notes, _, err := c.Notes.ListIssueNotes(t.Context(), p.ID, issue.ID, nil)
	require.NoError(t, err)
	assert.Len(t, notes, 4, "two commands, one reply each")
}
