package bot

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/collabsvc/collab/webhook"
	"github.com/stretchr/testify/assert"
)

// TestCallbackOrder: the callbacks of an event run in the order the
// package docs give: issue callbacks as registered; for a comment, every
// OnNote callback as registered, then the commands as written, each
// command's callbacks as registered. The first error stops the rest, and
// the retry runs them all again.
func TestCallbackOrder(t *testing.T) {
	w := newWorld(t)
	b := newOnceBot(t, w.c, 2)
	var l log
	rec := func(name string) func(context.Context) {
		return func(ctx context.Context) { l.add(ctx, t, name) }
	}
	issue := func(name string) func(context.Context, *Issue) error {
		return func(ctx context.Context, _ *Issue) error { rec(name)(ctx); return nil }
	}
	command := func(name string) func(context.Context, *Note, Command) error {
		return func(ctx context.Context, _ *Note, _ Command) error { rec(name)(ctx); return nil }
	}
	var failed atomic.Bool
	b.OnIssue(issue("open 1"), webhook.IssueOpen)
	b.OnIssue(issue("any"))
	b.OnIssue(issue("close"), webhook.IssueClose)
	b.OnIssue(issue("open 2"), webhook.IssueOpen)
	b.Command("x", command("x 1"))
	b.OnNote(func(ctx context.Context, _ *Note) error { rec("note 1")(ctx); return nil })
	b.Command("y", command("y"))
	b.OnNote(func(ctx context.Context, _ *Note) error {
		rec("note 2")(ctx)
		if !failed.Swap(true) {
			return errors.New("fails once")
		}
		return nil
	})
	b.Command("x", command("x 2"))
	w.start(t, b)
	is := w.srv.Seed.Issue(w.project, w.bobUser, "Crash")
	w.settle(t, b)
	assert.Equal(t, []string{"open 1", "any", "open 2"}, l.take())
	w.srv.Seed.IssueNote(is, w.bobUser, "/y\n/x")
	w.settle(t, b)
	assert.Equal(t, []string{"note 1", "note 2", "note 1", "note 2", "y", "x 1", "x 2"}, l.take())
}
