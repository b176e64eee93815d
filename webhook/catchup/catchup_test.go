package catchup_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/catchup"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newWebshop(t *testing.T) (*collabtest.Server, *collab.Client, *collab.Project) {
	t.Helper()
	srv := collabtest.NewTestServer(t)
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	require.NoError(t, err)
	return srv, c, srv.Seed.Project(srv.Admin, "Webshop", collab.InternalVisibility)
}

// handledEvent is what a callback saw.
type handledEvent struct {
	key, object string
	synthesized bool
	record      string
}

// recorder is a receiver's callbacks, keeping what they saw and what the
// handler logged.
type recorder struct {
	mu   sync.Mutex
	seen []handledEvent
	logs strings.Builder
	// workers for the handler; with one, events are handled in the order
	// they were admitted.
	workers int
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logs.Write(p)
}

func (r *recorder) logged() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.logs.String()
}

func (r *recorder) note(ctx context.Context, object string) error {
	d := webhook.DeliveryFrom(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, handledEvent{key: d.Key, object: object, synthesized: d.Synthesized, record: string(d.Record)})
	return nil
}

func (r *recorder) options(q webhook.Queue) webhook.Options {
	return webhook.Options{
		Queue:   q,
		Workers: r.workers,
		Logger:  slog.New(slog.NewTextHandler(r, nil)),
		OnIssue: func(ctx context.Context, e *webhook.IssueEvent) error {
			return r.note(ctx, fmt.Sprintf("issue %d %s", e.ObjectAttributes.ID, e.ObjectAttributes.Title))
		},
		OnMergeRequest: func(ctx context.Context, e *webhook.MergeRequestEvent) error {
			return r.note(ctx, fmt.Sprintf("merge_request %d %s", e.ObjectAttributes.ID, e.ObjectAttributes.State))
		},
		OnNote: func(ctx context.Context, e *webhook.NoteEvent) error {
			return r.note(ctx, fmt.Sprintf("note %d %s", e.ObjectAttributes.ID, e.ObjectAttributes.Note))
		},
		OnBuild: func(ctx context.Context, e *webhook.BuildEvent) error {
			return r.note(ctx, fmt.Sprintf("build %d %s", e.BuildID, e.BuildStatus))
		},
		OnPush: func(ctx context.Context, e *webhook.PushEvent) error {
			return r.note(ctx, fmt.Sprintf("push %s %s", e.Ref, e.After))
		},
	}
}

func (r *recorder) events() []handledEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]handledEvent(nil), r.seen...)
}

// receiverUp runs a Handler on q behind a loopback server until the
// returned stop is called.
func receiverUp(t *testing.T, r *recorder, q webhook.Queue) (*webhook.Handler, string, func()) {
	t.Helper()
	return runHandler(t, r.options(q))
}

// runHandler runs a Handler made with opts behind a loopback server until
// the returned stop is called.
func runHandler(t *testing.T, opts webhook.Options) (*webhook.Handler, string, func()) {
	t.Helper()
	h, err := webhook.NewHandler(opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	srv := httptest.NewServer(h)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			srv.Close()
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(stop)
	return h, srv.URL, stop
}

// TestCatchUp: a receiver is down while issues, merge requests, notes,
// builds and pushes change; after a restart, catch-up hands every change to
// the callbacks as a synthesized event, and nothing the receiver handled
// before is handed over again.
func TestCatchUp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, c, project := newWebshop(t)
	pid := project.ID
	q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{}) // outlives the receiver, as a disk queue would
	t.Cleanup(func() { q.Close() })
	opts := catchup.Options{Projects: catchup.IDs(pid)}

	// Up: the first catch-up only records where the project stands.
	before := &recorder{}
	h, url, stop := receiverUp(t, before, q)
	old := srv.Seed.Issue(project, srv.Admin, "Old issue").ID
	stats, err := catchup.Run(ctx, h, c, opts)
	require.NoError(t, err)
	assert.Empty(t, stats.Admitted, "a first catch-up without Since hands nothing over")
	_, _, err = c.Hooks.Add(ctx, pid, &collab.AddHookOptions{URL: url, PushEvents: collab.Ptr(true), IssuesEvents: collab.Ptr(true),
		MergeRequestsEvents: collab.Ptr(true), NoteEvents: collab.Ptr(true), BuildEvents: collab.Ptr(true)})
	require.NoError(t, err)

	issue, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Crash on save"})
	require.NoError(t, err)
	_, err = srv.Push(pid, "feature", collabtest.PushCommit{Message: "Start feature"})
	require.NoError(t, err)
	mr, _, err := c.MergeRequests.Create(ctx, pid, &collab.CreateMergeRequestOptions{SourceBranch: "feature", TargetBranch: "master", Title: "Feature"})
	require.NoError(t, err)
	_, _, err = c.Notes.CreateIssueNote(ctx, pid, issue.ID, &collab.CreateNoteOptions{Body: "Seen it too."})
	require.NoError(t, err)
	build := srv.Seed.Build(project, collabtest.BuildSpec{Name: "rspec"}).ID
	require.NoError(t, srv.WaitIdle(ctx))
	require.NoError(t, h.WaitIdle(ctx))
	stop()
	handledBefore := before.events()
	require.Len(t, handledBefore, 5, "issue, push, merge request, note and build delivered while up")
	// Dedup keys tell states of an issue apart by updated_at, to the second
	// as the server's webhooks write it: let the changes below happen in a
	// later second than those above.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))

	// Down: every delivery fails and the server does not send it again.
	_, _, err = c.Issues.Update(ctx, pid, issue.ID, &collab.UpdateIssueOptions{Title: collab.Ptr("Crash on save (Firefox)")})
	require.NoError(t, err)
	other, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Slow search"})
	require.NoError(t, err)
	_, _, err = c.MergeRequests.Update(ctx, pid, mr.ID, &collab.UpdateMergeRequestOptions{StateEvent: collab.Ptr(collab.MergeRequestClose)})
	require.NoError(t, err)
	mrNote, _, err := c.Notes.CreateMergeRequestNote(ctx, pid, mr.ID, &collab.CreateNoteOptions{Body: "Closing for now."})
	require.NoError(t, err)
	// A comment on an issue untouched since before the first catch-up is
	// found among the project's events.
	oldNote, _, err := c.Notes.CreateIssueNote(ctx, pid, old, &collab.CreateNoteOptions{Body: "Still happens."})
	require.NoError(t, err)
	srv.SetBuildStatus(build, string(collab.BuildSuccess))
	build2 := srv.Seed.Build(project, collabtest.BuildSpec{Name: "lint"}).ID
	head, err := srv.Push(pid, "master", collabtest.PushCommit{Message: "Hotfix"})
	require.NoError(t, err)
	require.NoError(t, srv.WaitIdle(ctx))
	require.NoError(t, srv.Err())

	// Up again: catch up on what was missed.
	after := &recorder{}
	h, _, _ = receiverUp(t, after, q)
	stats, err = catchup.Run(ctx, h, c, opts)
	require.NoError(t, err)
	require.NoError(t, h.WaitIdle(ctx))

	got := map[string]bool{}
	for _, e := range after.events() {
		assert.True(t, e.synthesized, "%s came from catch-up", e.object)
		assert.True(t, json.Valid([]byte(e.record)) && len(e.record) > 2, "%s carries its record", e.object)
		got[e.object] = true
		for _, b := range handledBefore {
			assert.NotEqual(t, b.key, e.key, "%s was handled before the downtime and is handed over again", e.object)
		}
	}
	want := []string{
		fmt.Sprintf("issue %d Crash on save (Firefox)", issue.ID),
		fmt.Sprintf("issue %d Slow search", other.ID),
		fmt.Sprintf("merge_request %d closed", mr.ID),
		fmt.Sprintf("note %d Closing for now.", mrNote.ID),
		fmt.Sprintf("note %d Still happens.", oldNote.ID),
		fmt.Sprintf("build %d success", build),
		fmt.Sprintf("build %d pending", build2),
		fmt.Sprintf("push refs/heads/master %s", head),
	}
	for _, w := range want {
		assert.True(t, got[w], "missed change %q; catch-up handed over %v", w, got)
	}
	assert.Len(t, after.events(), len(want), "only the changes made while down")
	assert.Positive(t, stats.Duplicates, "what was handled before is re-read and skipped by key")
	t.Logf("catch-up: admitted %v, skipped %d already handled", stats.Admitted, stats.Duplicates)

	// Caught up: a second run finds nothing new.
	stats, err = catchup.Run(ctx, h, c, opts)
	require.NoError(t, err)
	assert.Empty(t, stats.Admitted)
}

// TestCatchUpSince: a project without a checkpoint is read from Since; the
// events come oldest first, and their bodies decode as the webhooks do.
func TestCatchUpSince(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, c, project := newWebshop(t)
	pid := project.ID
	// The fake keeps times to the millisecond: a pause between changes
	// gives each its own time, so that the order below is the order of
	// the changes and not that of the reading.
	tick := func() { time.Sleep(3 * time.Millisecond) }
	issueRecord := srv.Seed.Issue(project, srv.Admin, "Crash on save")
	issue := issueRecord.ID
	tick()
	srv.Seed.IssueNote(issueRecord, srv.Admin, "Me too")
	tick()
	srv.Seed.Build(project, collabtest.BuildSpec{Name: "rspec", Status: string(collab.BuildFailed)})
	tick()
	_, err := srv.Push(pid, "fix", collabtest.PushCommit{Message: "Fix"})
	require.NoError(t, err)
	tick()
	mrRecord := srv.Seed.MergeRequest(project, srv.Admin, "fix", "master", "Fix")
	tick()
	srv.Seed.MergeRequestNote(mrRecord, srv.Admin, "LGTM")
	require.NoError(t, srv.Err())

	r := &recorder{workers: 1}
	h, _, _ := receiverUp(t, r, nil)
	stats, err := catchup.Run(ctx, h, c, catchup.Options{Projects: catchup.IDs(pid), Since: time.Now().Add(-time.Hour)})
	require.NoError(t, err)
	require.NoError(t, h.WaitIdle(ctx))
	assert.Equal(t, map[webhook.Kind]int{webhook.KindIssue: 1, webhook.KindNote: 2, webhook.KindBuild: 1,
		webhook.KindPush: 1, webhook.KindMergeRequest: 1}, stats.Admitted)
	var objects []string
	for _, e := range r.events() {
		objects = append(objects, e.object)
	}
	assert.Equal(t, []string{"issue " + fmt.Sprint(issue) + " Crash on save", "note", "build", "push", "merge_request", "note"},
		firstWords(objects), "oldest first")
	assert.NotContains(t, r.logged(), "not decoded", "synthesized bodies decode cleanly")

	raw, err := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{}).Checkpoint(ctx, "catchup/1")
	require.NoError(t, err)
	assert.Nil(t, raw, "a new queue holds no checkpoint")
}

// TestCatchUpErrors: bad options, an unknown project and a damaged
// checkpoint are errors that name their cause; the other projects go on.
func TestCatchUpErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, c, project := newWebshop(t)
	pid := project.ID
	goodProject := srv.Seed.Project(srv.Admin, "Other", collab.InternalVisibility)
	good := goodProject.ID
	srv.Seed.Issue(goodProject, srv.Admin, "Still read")
	q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})
	t.Cleanup(func() { q.Close() })
	h, _, _ := receiverUp(t, &recorder{}, q)

	_, err := catchup.Run(ctx, h, nil, catchup.Options{})
	assert.ErrorContains(t, err, "nil client")
	_, err = catchup.Run(ctx, nil, c, catchup.Options{})
	assert.ErrorContains(t, err, "nil handler")
	_, err = catchup.Run(ctx, h, c, catchup.Options{Overlap: -time.Second})
	assert.ErrorContains(t, err, "negative Overlap")

	require.NoError(t, q.SetCheckpoint(ctx, fmt.Sprintf("catchup/%d", pid), []byte("{")))
	stats, err := catchup.Run(ctx, h, c, catchup.Options{Projects: catchup.IDs(pid, pid+1000, good), Since: time.Now().Add(-time.Hour)})
	assert.ErrorContains(t, err, "damaged")
	assert.ErrorContains(t, err, fmt.Sprint(pid+1000), "the error names the project")
	assert.Equal(t, 1, stats.Admitted[webhook.KindIssue], "the good project is caught up")
	raw, err := q.Checkpoint(ctx, fmt.Sprintf("catchup/%d", pid))
	require.NoError(t, err)
	assert.Equal(t, "{", string(raw), "a damaged checkpoint is left for the user to look at")
}

// firstWords keeps the kind of each entry, and the whole issue entry.
func firstWords(objects []string) []string {
	out := make([]string, len(objects))
	for i, o := range objects {
		if strings.HasPrefix(o, "issue ") {
			out[i] = o
			continue
		}
		out[i], _, _ = strings.Cut(o, " ")
	}
	return out
}

func TestProjectNames(t *testing.T) {
	assert.Equal(t, catchup.ID(12), catchup.Path("12"), "a path of digits is an id, as the API reads it")
	assert.Equal(t, catchup.ID(9), catchup.Of(&collab.Project{ID: 9, PathWithNamespace: "acme/shop"}))
	assert.Equal(t, []catchup.Project{catchup.ID(1), catchup.ID(2)}, catchup.IDs(1, 2))
	assert.Equal(t, "12", catchup.ID(12).String())
	assert.Equal(t, "acme/shop", catchup.Path("acme/shop").String())
	assert.Equal(t, "0x", catchup.Path("0x").String())
}

// TestCatchUpByPath: a project named by its path is read through the API by
// that path, and its checkpoint is kept under it.
func TestCatchUpByPath(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, c, project := newWebshop(t)
	pid := project.ID
	p, _, err := c.Projects.Get(ctx, pid)
	require.NoError(t, err)
	srv.Seed.Issue(project, srv.Admin, "Crash on save")
	q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})
	t.Cleanup(func() { q.Close() })
	r := &recorder{}
	h, _, _ := receiverUp(t, r, q)
	stats, err := catchup.Run(ctx, h, c, catchup.Options{Projects: []catchup.Project{catchup.Path(p.PathWithNamespace)},
		Since: time.Now().Add(-time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, map[webhook.Kind]int{webhook.KindIssue: 1}, stats.Admitted)
	raw, err := q.Checkpoint(ctx, "catchup/"+p.PathWithNamespace)
	require.NoError(t, err)
	assert.NotNil(t, raw)
}

// TestOnLoss: when the queue's engine lost what it held, OnLoss hands over
// again what changed since the time it names, even where a checkpoint says
// the project was caught up later.
func TestOnLoss(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, c, project := newWebshop(t)
	pid := project.ID
	lost := time.Now().Add(-time.Minute)
	issue := srv.Seed.Issue(project, srv.Admin, "Crash on save").ID

	q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})
	t.Cleanup(func() { q.Close() })
	// The engine came back with a checkpoint newer than the issue.
	require.NoError(t, q.SetCheckpoint(ctx, fmt.Sprintf("catchup/%d", pid),
		[]byte(fmt.Sprintf(`{"at":%q,"build_id":0}`, time.Now().Add(time.Minute).UTC().Format(time.RFC3339Nano)))))
	opts := catchup.Options{Projects: catchup.IDs(pid)}
	onLoss := catchup.OnLoss(c, opts)
	assert.ErrorContains(t, onLoss(ctx, nil, lost), "nil handler")

	r := &recorder{}
	h, _, _ := receiverUp(t, r, q)
	stats, err := catchup.Run(ctx, h, c, opts)
	require.NoError(t, err)
	assert.Empty(t, stats.Admitted, "the checkpoint says caught up")

	assert.ErrorContains(t, onLoss(ctx, h, time.Time{}), "no time")
	require.NoError(t, onLoss(ctx, h, lost))
	require.NoError(t, h.WaitIdle(ctx))
	require.Len(t, r.events(), 1)
	assert.Equal(t, fmt.Sprintf("issue %d Crash on save", issue), r.events()[0].object)
	assert.True(t, r.events()[0].synthesized)
}

// reports is an Observer that keeps the catch-up reports and the
// admissions.
type reports struct {
	mu       sync.Mutex
	runs     []webhook.CatchUpReport
	admitted map[webhook.Outcome]int
}

func (o *reports) DeliveryReceived(ctx context.Context, _ *http.Request) context.Context { return ctx }
func (o *reports) DeliveryAdmitted(_ context.Context, _ webhook.Kind, outcome webhook.Outcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.admitted[outcome]++
}
func (o *reports) Inject(context.Context, http.Header) {}
func (o *reports) HandlingStarted(ctx context.Context, _ *webhook.Delivery) context.Context {
	return ctx
}
func (o *reports) HandlingEnded(context.Context, *webhook.Delivery, webhook.HandleOutcome, time.Duration, error) {
}
func (o *reports) CatchUpEnded(_ context.Context, r webhook.CatchUpReport) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.runs = append(o.runs, r)
}

// TestCatchUpReports: each project's run reaches the Observer, with the
// changes stored, how far behind the checkpoint was, and the error.
func TestCatchUpReports(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, c, project := newWebshop(t)
	pid := project.ID
	since := time.Now().Add(-time.Hour)
	srv.Seed.Issue(project, srv.Admin, "Crash on save")
	srv.Seed.Issue(project, srv.Admin, "Slow search")
	obs := &reports{admitted: map[webhook.Outcome]int{}}
	h, err := webhook.NewHandler(webhook.Options{Observer: obs, OnIssue: func(context.Context, *webhook.IssueEvent) error { return nil }})
	require.NoError(t, err)

	_, err = catchup.Run(ctx, h, c, catchup.Options{Projects: []catchup.Project{catchup.ID(pid), catchup.Path("nobody/nothing")}, Since: since})
	require.Error(t, err)
	_, err = catchup.Run(ctx, h, c, catchup.Options{Projects: catchup.IDs(pid)})
	require.NoError(t, err)

	require.Len(t, obs.runs, 3)
	first, missing, again := obs.runs[0], obs.runs[1], obs.runs[2]
	assert.Equal(t, fmt.Sprint(pid), first.Project)
	assert.Equal(t, 2, first.Changes)
	assert.Greater(t, first.Lag, 50*time.Minute, "the newest change is about an hour after Since")
	assert.NoError(t, first.Err)
	assert.Equal(t, "nobody/nothing", missing.Project)
	assert.ErrorIs(t, missing.Err, collab.ErrNotFound)
	assert.Zero(t, again.Changes)
	assert.Zero(t, again.Lag)
	assert.Equal(t, map[webhook.Outcome]int{webhook.OutcomeAccepted: 2, webhook.OutcomeDuplicate: 2}, obs.admitted,
		"the second run re-reads the overlap and finds both")
}

// lossyQueue is a queue whose engine reports losses on demand.
type lossyQueue struct {
	*webhook.MemoryQueue
	losses chan time.Time
}

func (q *lossyQueue) Losses() <-chan time.Time { return q.losses }

// TestOnLossWithHandler: OnLoss set in the handler's options catches up
// when the queue reports a loss.
func TestOnLossWithHandler(t *testing.T) {
	srv, c, project := newWebshop(t)
	pid := project.ID
	lost := time.Now().Add(-time.Minute)
	issue := srv.Seed.Issue(project, srv.Admin, "Crash on save").ID
	q := &lossyQueue{webhook.NewMemoryQueue(webhook.MemoryQueueOptions{}), make(chan time.Time, 1)}
	t.Cleanup(func() { q.Close() })

	r := &recorder{}
	opts := r.options(q)
	opts.OnLoss = catchup.OnLoss(c, catchup.Options{Projects: catchup.IDs(pid)})
	h, _, _ := runHandler(t, opts)

	q.losses <- lost
	require.Eventually(t, func() bool { return len(r.events()) == 1 }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, fmt.Sprintf("issue %d Crash on save", issue), r.events()[0].object)
	assert.Equal(t, int64(1), h.Stats().Losses)
}
