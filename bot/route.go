package bot

import (
	"context"
	"slices"
	"strconv"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/webhook"
)

// route is one registration: a callback and the actions (or build
// statuses) it takes; none means all.
type route[E any, A comparable] struct {
	fn      func(context.Context, E) error
	actions []A
}

// add appends r to one of b's route lists, under b's lock.
func add[R any](b *Bot, list *[]R, r R) {
	b.mu.Lock()
	defer b.mu.Unlock()
	*list = append(*list, r)
}

// routesOf reads one of b's route lists, under b's lock.
func routesOf[R any](b *Bot, list *[]R) []R {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return *list
}

// dispatch runs, in order, the callbacks of routes that take action, and
// stops at the first error so that the delivery is tried again.
func dispatch[E any, A comparable](ctx context.Context, routes []route[E, A], action A, ev E) error {
	for _, r := range routes {
		if len(r.actions) == 0 || slices.Contains(r.actions, action) {
			if err := r.fn(ctx, ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// OnIssue registers fn for issue events with one of actions, or every
// action when none is given, like signal.Notify takes its signals last:
//
//	b.OnIssue(triage, webhook.IssueOpen, webhook.IssueReopen)
func (b *Bot) OnIssue(fn func(context.Context, *Issue) error, actions ...webhook.IssueAction) {
	add(b, &b.issues, route[*Issue, webhook.IssueAction]{fn, actions})
}

// OnMergeRequest registers fn for merge request events with one of actions,
// or every action when none is given.
func (b *Bot) OnMergeRequest(fn func(context.Context, *MergeRequest) error, actions ...webhook.MergeRequestAction) {
	add(b, &b.mrs, route[*MergeRequest, webhook.MergeRequestAction]{fn, actions})
}

// OnNote registers fn for every comment, whatever it is on. The callbacks
// of the comment's commands (see Command) run after every OnNote callback.
func (b *Bot) OnNote(fn func(context.Context, *Note) error) {
	add(b, &b.notes, route[*Note, struct{}]{fn: fn})
}

// OnBuild registers fn for build events with one of statuses, or every
// status when none is given: OnBuild(fn, collab.BuildFailed).
func (b *Bot) OnBuild(fn func(context.Context, *Build) error, statuses ...collab.BuildStatus) {
	add(b, &b.builds, route[*Build, collab.BuildStatus]{fn, statuses})
}

// OnPush registers fn for pushes to branches.
func (b *Bot) OnPush(fn func(context.Context, *Push) error) {
	add(b, &b.pushes, route[*Push, struct{}]{fn: fn})
}

// Command registers fn for the slash command name ("label" for "/label bug
// ui") in comments on issues and merge requests; see ParseCommands for how
// commands are written. A comment with several commands runs each, in
// order. Commands no callback is registered for are ignored, and so are the
// commands in the bot's own comments and in system notes.
func (b *Bot) Command(name string, fn func(context.Context, *Note, Command) error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.commands[name] = append(b.commands[name], fn)
}

// own reports whether the bot caused an event: its user name or id is the
// bot's.
func (b *Bot) own(username string, userID int) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.opts.IncludeOwnEvents || b.me == nil {
		return false
	}
	return (username != "" && username == b.me.Username) || (userID != 0 && userID == b.me.ID)
}

// clientFor is the client an event's calls go through: the bot's, or with
// ActAsUser the event's user's through Sudo.
func (b *Bot) clientFor(user string) *collab.Client {
	if b.opts.ActAsUser && user != "" {
		return b.opts.Client.Sudo(user)
	}
	return b.opts.Client
}

func username(u *webhook.User) string {
	if u == nil {
		return ""
	}
	return u.Username
}

func (b *Bot) onIssue(ctx context.Context, ev *webhook.IssueEvent) error {
	a := ev.ObjectAttributes
	if a == nil || b.own(username(ev.User), 0) {
		return nil
	}
	routes := routesOf(b, &b.issues)
	t := &Thread{Client: b.clientFor(username(ev.User)), ProjectID: a.ProjectID, ID: a.ID, IID: a.IID}
	return dispatch(ctx, routes, a.Action, &Issue{Thread: t, Event: ev})
}

func (b *Bot) onMergeRequest(ctx context.Context, ev *webhook.MergeRequestEvent) error {
	a := ev.ObjectAttributes
	if a == nil || b.own(username(ev.User), 0) {
		return nil
	}
	routes := routesOf(b, &b.mrs)
	t := &Thread{Client: b.clientFor(username(ev.User)), ProjectID: a.TargetProjectID, ID: a.ID, IID: a.IID, MergeRequest: true}
	return dispatch(ctx, routes, a.Action, &MergeRequest{Thread: t, Event: ev})
}

func (b *Bot) onNote(ctx context.Context, ev *webhook.NoteEvent) error {
	a := ev.ObjectAttributes
	if a == nil || b.own(username(ev.User), a.AuthorID) {
		return nil
	}
	n := &Note{Thread: b.noteThread(ev), Event: ev}
	b.mu.RLock()
	routes, commands := b.notes, b.commands
	b.mu.RUnlock()
	if err := dispatch(ctx, routes, struct{}{}, n); err != nil {
		return err
	}
	if len(commands) == 0 || a.System || n.Thread == nil {
		return nil
	}
	for _, cmd := range ParseCommands(a.Note) {
		for _, fn := range commands[cmd.Name] {
			if err := fn(ctx, n, cmd); err != nil {
				return err
			}
		}
	}
	return nil
}

// noteThread is the issue or merge request a comment is on, or nil for a
// comment on a commit or a snippet.
func (b *Bot) noteThread(ev *webhook.NoteEvent) *Thread {
	c := b.clientFor(username(ev.User))
	switch {
	case ev.Issue != nil:
		return &Thread{Client: c, ProjectID: ev.ProjectID, ID: ev.Issue.ID, IID: ev.Issue.IID}
	case ev.MergeRequest != nil:
		return &Thread{Client: c, ProjectID: ev.ProjectID, ID: ev.MergeRequest.ID, IID: ev.MergeRequest.IID, MergeRequest: true}
	}
	return nil
}

func (b *Bot) onBuild(ctx context.Context, ev *webhook.BuildEvent) error {
	var uid int
	if ev.User != nil && ev.User.ID != nil {
		uid = *ev.User.ID
	}
	if b.own("", uid) {
		return nil
	}
	routes := routesOf(b, &b.builds)
	user := ""
	if uid != 0 {
		user = strconv.Itoa(uid)
	}
	return dispatch(ctx, routes, ev.BuildStatus, &Build{Client: b.clientFor(user), ProjectID: ev.ProjectID, Event: ev})
}

func (b *Bot) onPush(ctx context.Context, ev *webhook.PushEvent) error {
	if b.own("", ev.UserID) {
		return nil
	}
	routes := routesOf(b, &b.pushes)
	user := ""
	if ev.UserID != 0 {
		user = strconv.Itoa(ev.UserID)
	}
	return dispatch(ctx, routes, struct{}{}, &Push{Client: b.clientFor(user), ProjectID: ev.ProjectID, Event: ev})
}
