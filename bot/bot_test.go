package bot

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// world is a fake server with a public project, a person (bob) and a bot
// client acting as the administrator.
type world struct {
	srv      *collabtest.Server
	project  *collab.Project
	pid, bob int // project.ID, bobUser.ID
	bobUser  collabtest.User
	bobC, c  *collab.Client
	hook     *collabtest.Receiver
}

func newWorld(t *testing.T) *world {
	t.Helper()
	srv := collabtest.NewTestServer(t)
	bob := srv.Seed.User("bob")
	// bob owns the project, so that he is the pusher and builds' user.
	w := &world{srv: srv, project: srv.Seed.Project(bob, "app", collab.PublicVisibility), bob: bob.ID, bobUser: bob}
	w.pid = w.project.ID
	var err error
	w.c, err = collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken), collab.WithoutRetries())
	require.NoError(t, err)
	w.bobC, err = collab.NewClient(srv.URL, collab.WithPrivateToken(bob.Token), collab.WithoutRetries())
	require.NoError(t, err)
	w.hook = srv.AddReceiver(w.pid)
	return w
}

// start runs b behind the world's hook until the test ends.
func (w *world) start(t *testing.T, b *Bot) { startOn(t, w.hook, b) }

// startOn runs b behind hook until the test ends.
func startOn(t *testing.T, hook *collabtest.Receiver, b *Bot) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	hook.Set(b)
	t.Cleanup(func() {
		hook.Set(nil)
		cancel()
		assert.NoError(t, <-done)
	})
}

func (w *world) settle(t *testing.T, b *Bot) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, w.srv.Settle(ctx, b))
}

// log records what the callbacks saw.
type log struct {
	mu  sync.Mutex
	got []string
}

func (l *log) add(ctx context.Context, t *testing.T, s string) {
	assert.NotNil(t, webhook.DeliveryFrom(ctx), "the callback's context is the handler's")
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, s)
}

func (l *log) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.got
	l.got = nil
	return out
}

// TestRouting: callbacks get the kinds and actions they registered for,
// several actions per registration; the Thread helpers act; the events the
// bot's own calls cause reach no callback.
func TestRouting(t *testing.T) {
	w := newWorld(t)
	b, err := New(Options{Client: w.c, Dir: t.TempDir()})
	require.NoError(t, err)
	var l log
	b.OnIssue(func(ctx context.Context, is *Issue) error {
		l.add(ctx, t, "issue "+string(is.Event.ObjectAttributes.Action))
		return is.Comment(ctx, "Seen")
	}, webhook.IssueOpen, webhook.IssueReopen)
	b.OnIssue(func(ctx context.Context, is *Issue) error {
		l.add(ctx, t, "any issue "+string(is.Event.ObjectAttributes.Action))
		return nil
	})
	b.OnMergeRequest(func(ctx context.Context, mr *MergeRequest) error {
		l.add(ctx, t, "mr "+string(mr.Event.ObjectAttributes.Action))
		return mr.Close(ctx)
	}, webhook.MergeRequestOpen)
	b.OnNote(func(ctx context.Context, n *Note) error {
		l.add(ctx, t, "note "+n.Event.ObjectAttributes.Note)
		return nil
	})
	b.Command("label", func(ctx context.Context, n *Note, c Command) error {
		l.add(ctx, t, "label")
		return n.AddLabels(ctx, c.Args...)
	})
	b.Command("unlabel", func(ctx context.Context, n *Note, c Command) error { return n.RemoveLabels(ctx, c.Args...) })
	b.Command("reopen", func(ctx context.Context, n *Note, _ Command) error { return n.Reopen(ctx) })
	b.OnBuild(func(ctx context.Context, bd *Build) error {
		l.add(ctx, t, "build "+string(bd.Event.BuildStatus))
		return nil
	}, collab.BuildFailed)
	b.OnPush(func(ctx context.Context, p *Push) error {
		l.add(ctx, t, "push "+p.Event.Ref)
		return nil
	})
	w.start(t, b)
	ctx := context.Background()

	is, _, err := w.bobC.Issues.Create(ctx, w.pid, &collab.CreateIssueOptions{Title: "Crash"})
	require.NoError(t, err)
	w.settle(t, b)
	assert.Equal(t, []string{"issue open", "any issue open"}, l.take(), "the bot's comment causes no callback")
	assert.Equal(t, "root", b.Me().Username)

	_, _, err = w.bobC.Issues.Update(ctx, w.pid, is.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)})
	require.NoError(t, err)
	w.settle(t, b)
	assert.Equal(t, []string{"any issue close"}, l.take())

	_, _, err = w.bobC.Notes.CreateIssueNote(ctx, w.pid, is.ID, &collab.CreateNoteOptions{Body: "/label bug \"needs review\"\n/reopen\n/unlabel bug"})
	require.NoError(t, err)
	w.settle(t, b)
	assert.Equal(t, []string{"note /label bug \"needs review\"\n/reopen\n/unlabel bug", "label"}, l.take(),
		"the bot's label change and reopening are its own")
	got, _, err := w.c.Issues.Get(ctx, w.pid, is.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"needs review"}, got.Labels)
	assert.NotEqual(t, collab.IssueClosed, got.State)

	w.srv.Seed.Branch(w.project, "feature")
	mrID := w.srv.Seed.MergeRequest(w.project, w.bobUser, "feature", "master", "Fix").ID
	w.srv.Seed.Build(w.project, collabtest.BuildSpec{Status: "success"})
	w.srv.Seed.Build(w.project, collabtest.BuildSpec{Status: "failed"})
	_, err = w.srv.Push(w.pid, "master", collabtest.PushCommit{Message: "Hotfix"})
	require.NoError(t, err)
	w.settle(t, b)
	assert.ElementsMatch(t, []string{"mr open", "build failed", "push refs/heads/master"}, l.take())
	mr, _, err := w.c.MergeRequests.Get(ctx, w.pid, mrID)
	require.NoError(t, err)
	assert.Equal(t, collab.MergeRequestClosed, mr.State)
}

// TestActAsUser: with ActAsUser, the bot's calls are made as the event's
// user, so its comment is bob's; IncludeOwnEvents hands it its own events.
func TestActAsUser(t *testing.T) {
	w := newWorld(t)
	b, err := New(Options{Client: w.c, Webhook: webhook.Options{Queue: webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})},
		ActAsUser: true})
	require.NoError(t, err)
	var l log
	b.OnIssue(func(ctx context.Context, is *Issue) error {
		l.add(ctx, t, "issue")
		return is.Comment(ctx, "As bob")
	}, webhook.IssueOpen)
	b.OnNote(func(ctx context.Context, n *Note) error {
		l.add(ctx, t, "note by "+n.Event.User.Username)
		return nil
	})
	w.start(t, b)
	is := w.srv.Seed.Issue(w.project, w.bobUser, "Crash").ID
	w.settle(t, b)
	assert.Equal(t, []string{"issue", "note by bob"}, l.take(), "bob's comment is not the bot's")
	notes, _, err := w.c.Notes.ListIssueNotes(context.Background(), w.pid, is, nil)
	require.NoError(t, err)
	require.Len(t, notes, 1)
	assert.Equal(t, "bob", notes[0].Author.Username)

	own, err := New(Options{Client: w.c, Dir: t.TempDir(), IncludeOwnEvents: true})
	require.NoError(t, err)
	own.OnNote(func(ctx context.Context, n *Note) error { l.add(ctx, t, "own "+n.Event.User.Username); return nil })
	w.hook.Set(nil)
	w.start(t, own)
	_, _, err = w.c.Notes.CreateIssueNote(context.Background(), w.pid, is, &collab.CreateNoteOptions{Body: "by the bot"})
	require.NoError(t, err)
	w.settle(t, own)
	assert.Equal(t, []string{"own root"}, l.take())
}

// TestNewRefuses: New needs a client and a queue, and sets the webhook
// callbacks itself; a commit comment has no thread to act on.
func TestNewRefuses(t *testing.T) {
	c := mustClient(t)
	_, err := New(Options{Dir: t.TempDir()})
	assert.ErrorIs(t, err, errNoClient)
	_, err = New(Options{Client: c})
	assert.ErrorIs(t, err, errNoQueue)
	_, err = New(Options{Client: c, Dir: t.TempDir(), Webhook: webhook.Options{OnPush: func(context.Context, *webhook.PushEvent) error { return nil }}})
	assert.ErrorIs(t, err, errOwnCallback)
	_, err = New(Options{Client: c, Dir: t.TempDir(), Webhook: webhook.Options{Workers: -1}})
	assert.Error(t, err)

	var n Note
	ctx := context.Background()
	for _, err := range []error{n.Comment(ctx, "x"), n.AddLabels(ctx, "x"), n.RemoveLabels(ctx, "x"), n.Close(ctx), n.Reopen(ctx)} {
		assert.ErrorIs(t, err, ErrNoThread)
	}

	// Run fails when the server does not say who the bot is, and closes the queue.
	b, err := New(Options{Client: c, Dir: t.TempDir()})
	require.NoError(t, err)
	assert.Error(t, b.Run(ctx))
	assert.ErrorIs(t, b.Run(ctx), errRanTwice, "a second run is refused, not a panic")
}
