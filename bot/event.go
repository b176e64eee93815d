package bot

import (
	"context"
	"errors"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/webhook"
)

// ErrNoThread is what the calls of a Note's Thread return for a comment on a
// commit or a snippet, which has no issue or merge request to act on.
var ErrNoThread = errors.New("bot: the comment is not on an issue or a merge request")

// Thread is the issue or merge request an event is about, with the calls a
// bot makes on it. Its Client is the bot's, or with Options.ActAsUser the
// event's user's.
type Thread struct {
	Client       *collab.Client
	ProjectID    int
	ID           int  // the global id the API takes
	IID          int  // the number the project shows
	MergeRequest bool // a merge request, not an issue
}

// Comment posts body as a comment.
func (t *Thread) Comment(ctx context.Context, body string) error {
	return t.either(
		func() error { return errOf(t.Client.Notes.CreateMergeRequestNote(ctx, t.ProjectID, t.ID, body)) },
		func() error { return errOf(t.Client.Notes.CreateIssueNote(ctx, t.ProjectID, t.ID, body)) })
}

// AddLabels adds labels and keeps the others (see
// collab.IssuesService.AddLabels for the race it narrows).
func (t *Thread) AddLabels(ctx context.Context, labels ...string) error {
	return t.either(
		func() error { return errOf(t.Client.MergeRequests.AddLabels(ctx, t.ProjectID, t.ID, labels...)) },
		func() error { return errOf(t.Client.Issues.AddLabels(ctx, t.ProjectID, t.ID, labels...)) })
}

// RemoveLabels removes labels and keeps the others.
func (t *Thread) RemoveLabels(ctx context.Context, labels ...string) error {
	return t.either(
		func() error { return errOf(t.Client.MergeRequests.RemoveLabels(ctx, t.ProjectID, t.ID, labels...)) },
		func() error { return errOf(t.Client.Issues.RemoveLabels(ctx, t.ProjectID, t.ID, labels...)) })
}

// Close closes the issue or merge request. Closing a closed one succeeds.
func (t *Thread) Close(ctx context.Context) error {
	return t.setState(ctx, collab.IssueClose, collab.MergeRequestClose)
}

// Reopen reopens the issue or merge request. Reopening an open one
// succeeds.
func (t *Thread) Reopen(ctx context.Context) error {
	return t.setState(ctx, collab.IssueReopen, collab.MergeRequestReopen)
}

func (t *Thread) setState(ctx context.Context, is collab.IssueStateEvent, mr collab.MergeRequestStateEvent) error {
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
