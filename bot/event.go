package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/webhook"
)

// ErrNoThread is what the calls of a Note's Thread return for a comment on a
// commit or a snippet, which has no issue or merge request to act on.
var ErrNoThread = errors.New("bot: the comment is not on an issue or a merge request")

// Thread is the issue or merge request an event is about, with the calls a
// bot makes on it. Its Client is the bot's, or with Options.ActAsUser the
// event's user's.
//
// Every call is safe to run again for the same delivery, which is how the
// bot handles each one: at least once. The first attempt of a delivery
// costs what the plain call costs; later attempts (after a failed
// callback, a crash or a dead letter requeued) look at the thread first.
// See Comment, and Close for state changes; AddLabels and RemoveLabels
// always compare with the labels the thread has.
type Thread struct {
	Client       *collab.Client
	ProjectID    int
	ID           int  // the global id the API takes
	IID          int  // the number the project shows
	MergeRequest bool // a merge request, not an issue

	comments atomic.Int32 // the comments posted in this handling, numbering each
}

// Comment posts body as a comment, once per delivery. Called in a
// callback, it adds to the end of body an invisible marker derived from the
// delivery, the bot, and how many comments this Thread posted before in the
// handling (see collab.Once). On a later attempt of the same delivery it
// reads the thread's comments first, and posts only when none holds the
// marker. So a callback must post its comments in the same order on every
// attempt, and through one Thread per issue or merge request. Outside a
// callback it just posts.
func (t *Thread) Comment(ctx context.Context, body string) error {
	if t == nil {
		return ErrNoThread
	}
	opt := &collab.CreateNoteOptions{Body: body}
	o, ok := onceFor(ctx, "comment", int(t.comments.Add(1)))
	if !ok {
		return t.either(
			func() error { return errOf(t.Client.Notes.CreateMergeRequestNote(ctx, t.ProjectID, t.ID, opt)) },
			func() error { return errOf(t.Client.Notes.CreateIssueNote(ctx, t.ProjectID, t.ID, opt)) })
	}
	return t.either(
		func() error { return errOf(t.Client.Notes.CreateMergeRequestNoteOnce(ctx, t.ProjectID, t.ID, o, opt)) },
		func() error { return errOf(t.Client.Notes.CreateIssueNoteOnce(ctx, t.ProjectID, t.ID, o, opt)) })
}

// onceFor is the collab.Once of the n-th effect of its kind in the
// delivery ctx carries, by the bot ctx names; false outside a callback.
func onceFor(ctx context.Context, kind string, n int) (collab.Once, bool) {
	d := webhook.DeliveryFrom(ctx)
	if d == nil || d.Key == "" {
		return collab.Once{}, false
	}
	me, _ := ctx.Value(botKey{}).(int)
	return collab.Once{Key: fmt.Sprintf("bot %d %s %s %d", me, d.Key, kind, n), Fresh: firstAttempt(d)}, true
}

// botKey is the context key of the bot's user id. The markers of a bot's
// comments carry it, so that two bots answering one comment do not take
// each other's reply for their own.
type botKey struct{}

// withMe runs fn with the bot's user id in its context.
func withMe[E any](b *Bot, fn func(context.Context, E) error) func(context.Context, E) error {
	return func(ctx context.Context, ev E) error {
		if me := b.Me(); me != nil {
			ctx = context.WithValue(ctx, botKey{}, me.ID)
		}
		return fn(ctx, ev)
	}
}

// firstAttempt reports whether no handling of d can have run before this
// one: a requeued dead letter starts counting again, but keeps its error.
func firstAttempt(d *webhook.Delivery) bool {
	return d.Attempt <= 1 && d.LastError == ""
}

// AddLabels adds labels and keeps the others (see
// collab.IssuesService.AddLabels for the race it narrows). It reads the
// labels first and writes nothing when every one is there, so running it
// again changes nothing.
func (t *Thread) AddLabels(ctx context.Context, labels ...string) error {
	return t.either(
		func() error { return errOf(t.Client.MergeRequests.AddLabels(ctx, t.ProjectID, t.ID, labels...)) },
		func() error { return errOf(t.Client.Issues.AddLabels(ctx, t.ProjectID, t.ID, labels...)) })
}

// RemoveLabels removes labels and keeps the others, reading them first as
// AddLabels does.
func (t *Thread) RemoveLabels(ctx context.Context, labels ...string) error {
	return t.either(
		func() error { return errOf(t.Client.MergeRequests.RemoveLabels(ctx, t.ProjectID, t.ID, labels...)) },
		func() error { return errOf(t.Client.Issues.RemoveLabels(ctx, t.ProjectID, t.ID, labels...)) })
}

// Close closes the issue or merge request. On a later attempt of the same
// delivery it reads the state first, and does nothing when it is closed
// already; the first attempt writes at once.
func (t *Thread) Close(ctx context.Context) error {
	return t.setState(ctx, collab.IssueClose, collab.MergeRequestClose, string(collab.IssueClosed))
}

// Reopen reopens the issue or merge request, reading the state first on a
// later attempt as Close does.
func (t *Thread) Reopen(ctx context.Context) error {
	return t.setState(ctx, collab.IssueReopen, collab.MergeRequestReopen,
		string(collab.IssueOpened), string(collab.IssueReopened)) // the same words for a merge request
}

// setState sends the state event, unless a later attempt finds one of the
// states it leads to already there.
func (t *Thread) setState(ctx context.Context, is collab.IssueStateEvent, mr collab.MergeRequestStateEvent, leadsTo ...string) error {
	if d := webhook.DeliveryFrom(ctx); d != nil && !firstAttempt(d) {
		state, err := t.state(ctx)
		if err != nil || slices.Contains(leadsTo, state) {
			return err
		}
	}
	err := t.either(
		func() error {
			return errOf(t.Client.MergeRequests.Update(ctx, t.ProjectID, t.ID, &collab.UpdateMergeRequestOptions{StateEvent: &mr}))
		},
		func() error {
			return errOf(t.Client.Issues.Update(ctx, t.ProjectID, t.ID, &collab.UpdateIssueOptions{StateEvent: &is}))
		})
	if errors.Is(err, collab.ErrNotModified) {
		return nil
	}
	return err
}

// state reads the state of the issue or merge request.
func (t *Thread) state(ctx context.Context) (string, error) {
	var state string
	err := t.either(
		func() error {
			mr, _, err := t.Client.MergeRequests.Get(ctx, t.ProjectID, t.ID)
			if err == nil {
				state = string(mr.State)
			}
			return err
		},
		func() error {
			is, _, err := t.Client.Issues.Get(ctx, t.ProjectID, t.ID)
			if err == nil {
				state = string(is.State)
			}
			return err
		})
	return state, err
}

// either makes the call of a merge request's thread or the call of an
// issue's, whichever t is; a nil t (a comment on a commit or a snippet)
// makes neither and returns ErrNoThread.
func (t *Thread) either(mergeRequest, issue func() error) error {
	switch {
	case t == nil:
		return ErrNoThread
	case t.MergeRequest:
		return mergeRequest()
	default:
		return issue()
	}
}

// errOf keeps the error of a call's three results.
func errOf[T any](_ T, _ *collab.Response, err error) error { return err }

// Issue is an issue event, with the calls of its Thread.
type Issue struct {
	*Thread
	Event *webhook.IssueEvent
}

// MergeRequest is a merge request event, with the calls of its Thread.
type MergeRequest struct {
	*Thread
	Event *webhook.MergeRequestEvent
}

// Note is a comment event. Thread is the issue or merge request it is on,
// and nil for a comment on a commit or a snippet, whose calls then return
// ErrNoThread.
type Note struct {
	*Thread
	Event *webhook.NoteEvent
}

// Build is a build event, with the client to act on it.
type Build struct {
	Client    *collab.Client
	ProjectID int
	Event     *webhook.BuildEvent
}

// Push is a push to a branch, with the client to act on it.
type Push struct {
	Client    *collab.Client
	ProjectID int
	Event     *webhook.PushEvent
}
