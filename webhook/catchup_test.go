package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	h, err := webhook.NewHandler(r.options(q))
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
	srv, c, pid := newWebshop(t)
	q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{}) // outlives the receiver, as a disk queue would
	t.Cleanup(func() { q.Close() })
	opts := webhook.CatchUpOptions{Projects: []any{pid}}

	// Up: the first catch-up only records where the project stands.
	before := &recorder{}
	h, url, stop := receiverUp(t, before, q)
	old := srv.AddIssue(pid, srv.AdminID, "Old issue")
	stats, err := h.CatchUp(ctx, c, opts)
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
	_, _, err = c.Notes.CreateIssueNote(ctx, pid, issue.ID, "Seen it too.")
	require.NoError(t, err)
	build := srv.AddBuild(pid, collabtest.BuildSpec{Name: "rspec"})
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
	mrNote, _, err := c.Notes.CreateMergeRequestNote(ctx, pid, mr.ID, "Closing for now.")
	require.NoError(t, err)
	// A comment on an issue untouched since before the first catch-up is
	// found among the project's events.
	oldNote, _, err := c.Notes.CreateIssueNote(ctx, pid, old, "Still happens.")
	require.NoError(t, err)
	srv.SetBuildStatus(build, string(collab.BuildSuccess))
	build2 := srv.AddBuild(pid, collabtest.BuildSpec{Name: "lint"})
	head, err := srv.Push(pid, "master", collabtest.PushCommit{Message: "Hotfix"})
	require.NoError(t, err)
	require.NoError(t, srv.WaitIdle(ctx))
	require.NoError(t, srv.Err())

	// Up again: catch up on what was missed.
	after := &recorder{}
	h, _, _ = receiverUp(t, after, q)
	stats, err = h.CatchUp(ctx, c, opts)
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
	stats, err = h.CatchUp(ctx, c, opts)
	require.NoError(t, err)
	assert.Empty(t, stats.Admitted)
}

// TestCatchUpSince: a project without a checkpoint is read from Since; the
// events come oldest first, and their bodies decode as the webhooks do.
func TestCatchUpSince(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, c, pid := newWebshop(t)
	// The fake keeps times to the millisecond: a pause between changes
	// gives each its own time, so that the order below is the order of
	// the changes and not that of the reading.
	tick := func() { time.Sleep(3 * time.Millisecond) }
	issue := srv.AddIssue(pid, srv.AdminID, "Crash on save")
	tick()
	srv.AddNote(pid, "Issue", issue, srv.AdminID, "Me too")
	tick()
	srv.AddBuild(pid, collabtest.BuildSpec{Name: "rspec", Status: string(collab.BuildFailed)})
	tick()
	_, err := srv.Push(pid, "fix", collabtest.PushCommit{Message: "Fix"})
	require.NoError(t, err)
	tick()
	mr := srv.AddMergeRequest(pid, srv.AdminID, "fix", "master", "Fix")
	tick()
	srv.AddNote(pid, "MergeRequest", mr, srv.AdminID, "LGTM")
	require.NoError(t, srv.Err())

	r := &recorder{workers: 1}
	h, _, _ := receiverUp(t, r, nil)
	stats, err := h.CatchUp(ctx, c, webhook.CatchUpOptions{Projects: []any{pid}, Since: time.Now().Add(-time.Hour)})
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
	srv, c, pid := newWebshop(t)
	good := srv.AddProject(srv.AdminID, "Other", 10)
	srv.AddIssue(good, srv.AdminID, "Still read")
	q := webhook.NewMemoryQueue(webhook.MemoryQueueOptions{})
	t.Cleanup(func() { q.Close() })
	h, _, _ := receiverUp(t, &recorder{}, q)

	_, err := h.CatchUp(ctx, nil, webhook.CatchUpOptions{})
	assert.ErrorContains(t, err, "nil client")
	_, err = h.CatchUp(ctx, c, webhook.CatchUpOptions{Overlap: -time.Second})
	assert.ErrorContains(t, err, "negative Overlap")

	require.NoError(t, q.SetCheckpoint(ctx, fmt.Sprintf("catchup/%d", pid), []byte("{")))
	stats, err := h.CatchUp(ctx, c, webhook.CatchUpOptions{Projects: []any{pid, pid + 1000, good}, Since: time.Now().Add(-time.Hour)})
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
