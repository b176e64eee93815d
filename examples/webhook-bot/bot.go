package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/webhook"
)

// bot reacts to webhook events through the API: it triages new issues,
// closes an issue on a "/close" comment, and reports failed builds on their
// merge requests. Each reaction is reported, in the words printed.
type bot struct {
	c      *collab.Client
	self   string // the bot's username, if known: its own comments are not commands
	label  string
	report func(string)
	// metrics, when set, observes the bot's deliveries and is served on
	// /metrics.
	metrics *metrics
}

// options wires the bot's callbacks into a webhook handler whose events
// wait in q (a new memory queue when nil). The queue's dedup keys make a
// repeated delivery harmless.
func (b *bot) options(secret string, q webhook.Queue) webhook.Options {
	opts := webhook.Options{
		Secret:  secret,
		Queue:   q,
		OnIssue: b.onIssue,
		OnNote:  b.onNote,
		OnBuild: b.onBuild,
	}
	if b.metrics != nil {
		opts.Observer = b.metrics.Observer
	}
	return opts
}

// onIssue labels and comments on a new issue that has no labels. The
// payload does not carry labels, so the bot asks the API. An issue that has
// the bot's label was triaged already: an event handed over twice (after a
// crash, or by catch-up) changes nothing.
func (b *bot) onIssue(ctx context.Context, e *webhook.IssueEvent) error {
	a := e.ObjectAttributes
	if a == nil || a.Action != webhook.IssueOpen {
		return nil
	}
	issue, _, err := b.c.Issues.Get(ctx, a.ProjectID, a.ID)
	if err != nil {
		return fmt.Errorf("reading #%d: %w", a.IID, err)
	}
	if slices.Contains(issue.Labels, b.label) {
		return nil
	}
	if len(issue.Labels) > 0 {
		b.report(fmt.Sprintf("#%d %q already has labels %s: left alone", a.IID, a.Title, strings.Join(issue.Labels, ", ")))
		return nil
	}
	labels := collab.LabelNames{b.label}
	if _, _, err := b.c.Issues.Update(ctx, a.ProjectID, a.ID, &collab.UpdateIssueOptions{Labels: &labels}); err != nil {
		return fmt.Errorf("labelling #%d: %w", a.IID, err)
	}
	// A synthesized event does not know who acted; the author opened it.
	opener := ""
	if e.User != nil {
		opener = e.User.Username
	} else if issue.Author != nil {
		opener = issue.Author.Username
	}
	note := fmt.Sprintf("Thanks @%s! Labelled ~%s; comment `/close` to close it.", opener, b.label)
	if _, _, err := b.c.Notes.CreateIssueNote(ctx, a.ProjectID, a.ID, &collab.CreateNoteOptions{Body: note}); err != nil {
		return fmt.Errorf("commenting on #%d: %w", a.IID, err)
	}
	b.report(fmt.Sprintf("#%d %q: labelled ~%s and commented", a.IID, a.Title, b.label))
	return nil
}

// onNote closes an open issue when someone other than the bot comments
// "/close" on it.
func (b *bot) onNote(ctx context.Context, e *webhook.NoteEvent) error {
	a, issue := e.ObjectAttributes, e.Issue
	if a == nil || issue == nil || a.NoteableType != webhook.NoteableIssue || strings.TrimSpace(a.Note) != "/close" {
		return nil
	}
	if e.User != nil && b.self != "" && e.User.Username == b.self || issue.State == collab.IssueClosed {
		return nil
	}
	if _, _, err := b.c.Issues.Update(ctx, issue.ProjectID, issue.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)}); err != nil {
		return fmt.Errorf("closing #%d: %w", issue.IID, err)
	}
	from := "someone unknown"
	if e.User != nil {
		from = "@" + e.User.Username
	}
	b.report(fmt.Sprintf("#%d closed on /close from %s", issue.IID, from))
	return nil
}

// onBuild notes a failed build on the open merge request of its branch.
func (b *bot) onBuild(ctx context.Context, e *webhook.BuildEvent) error {
	if e.BuildStatus != collab.BuildFailed || e.Tag {
		return nil
	}
	for mr, err := range b.c.MergeRequests.All(ctx, e.ProjectID, &collab.ListMergeRequestsOptions{State: collab.Ptr(collab.MergeRequestOpened)}) {
		if err != nil {
			return fmt.Errorf("listing merge requests: %w", err)
		}
		if mr.SourceBranch != e.Ref {
			continue
		}
		note := fmt.Sprintf("Build %s (#%d) failed in stage %s at %.7s.", e.BuildName, e.BuildID, e.BuildStage, e.SHA)
		if _, _, err := b.c.Notes.CreateMergeRequestNote(ctx, e.ProjectID, mr.ID, &collab.CreateNoteOptions{Body: note}); err != nil {
			return fmt.Errorf("noting on !%d: %w", mr.IID, err)
		}
		b.report(fmt.Sprintf("!%d: build %s (#%d) failed; noted on the merge request", mr.IID, e.BuildName, e.BuildID))
		return nil
	}
	b.report(fmt.Sprintf("build %s (#%d) on %s failed; no open merge request", e.BuildName, e.BuildID, e.Ref))
	return nil
}
