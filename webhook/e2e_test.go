package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
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

// newWebshop starts the fake server with one project and returns an admin
// client for it; the server closes when the test ends.
func newWebshop(t *testing.T) (*collabtest.Server, *collab.Client, *collab.Project) {
	t.Helper()
	srv := collabtest.NewTestServer(t)
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	require.NoError(t, err)
	return srv, c, srv.Seed.Project(srv.Admin, "Webshop", collab.InternalVisibility)
}

// TestEndToEnd: the SDK registers a hook on the fake server and opens an
// issue; a bot built on this package labels it and comments. The fake
// delivers the issue's first event twice, and the bot still acts once.
func TestEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, c, project := newWebshop(t)
	pid := project.ID

	var mu sync.Mutex
	opened := 0
	acted := make(chan int, 4)
	h, err := webhook.NewHandler(webhook.Options{
		Secret: "e2e-secret",
		OnIssue: func(ctx context.Context, e *webhook.IssueEvent) error {
			a := e.ObjectAttributes
			if a.Action != "open" {
				return nil
			}
			mu.Lock()
			opened++
			mu.Unlock()
			labels := collab.LabelNames{"triage"}
			if _, _, err := c.Issues.Update(ctx, a.ProjectID, a.ID, &collab.UpdateIssueOptions{Labels: &labels}); err != nil {
				return err
			}
			if _, _, err := c.Notes.CreateIssueNote(ctx, a.ProjectID, a.ID, &collab.CreateNoteOptions{Body: "Labelled ~triage."}); err != nil {
				return err
			}
			acted <- a.ID
			return nil
		},
	})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- h.Run(runCtx) }()
	receiver := httptest.NewServer(h)
	defer receiver.Close()

	hook, _, err := c.Hooks.Add(ctx, pid, &collab.AddHookOptions{URL: receiver.URL, IssuesEvents: collab.Ptr(true), PushEvents: collab.Ptr(false)})
	require.NoError(t, err)
	require.NoError(t, srv.SetHookToken(hook.ID, "e2e-secret"))
	srv.InjectDeliveryFault(collabtest.DeliveryFault{Duplicate: true})

	issue, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Crash on save"})
	require.NoError(t, err)
	select {
	case id := <-acted:
		assert.Equal(t, issue.ID, id)
	case <-ctx.Done():
		t.Fatal("the bot never acted")
	}
	require.NoError(t, srv.WaitIdle(ctx))
	stop()
	require.NoError(t, <-stopped)

	got, _, err := c.Issues.Get(ctx, pid, issue.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"triage"}, got.Labels)
	notes, _, err := c.Notes.ListIssueNotes(ctx, pid, issue.ID, nil)
	require.NoError(t, err)
	assert.Len(t, notes, 1, "one comment despite the repeated delivery")
	assert.Equal(t, 1, opened)

	dup := 0
	for _, d := range srv.Deliveries() {
		assert.Equal(t, http.StatusOK, d.Status, "%s attempt %d", d.Event, d.Attempt)
		assert.Equal(t, "e2e-secret", d.Header.Get(webhook.HeaderToken))
		if d.Duplicate {
			dup++
		}
	}
	assert.Equal(t, 1, dup, "the fake sent one repeat")
	st := h.Stats()
	// The repeat only: the bot's own label change, even within the second
	// the issue was opened, is an event of its own.
	assert.Equal(t, int64(1), st.Duplicates)
	assert.Zero(t, st.Retried+st.DeadLettered+st.Dropped+st.Rejected)
}

// TestFakeDeliveriesDecodeStrictly drives every kind of change on the fake
// server and decodes each delivered payload: no field error, no key without
// a field, and a lossless round trip.
func TestFakeDeliveriesDecodeStrictly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, c, project := newWebshop(t)
	pid := project.ID
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer receiver.Close()
	_, _, err := c.Hooks.Add(ctx, pid, &collab.AddHookOptions{URL: receiver.URL, PushEvents: collab.Ptr(true), TagPushEvents: collab.Ptr(true),
		IssuesEvents: collab.Ptr(true), MergeRequestsEvents: collab.Ptr(true), NoteEvents: collab.Ptr(true), BuildEvents: collab.Ptr(true)})
	require.NoError(t, err)

	_, err = srv.Push(pid, "master", collabtest.PushCommit{Message: "Initial", AuthorName: "Root", AuthorEmail: "root@example.com", Added: []string{"README.md"}})
	require.NoError(t, err)
	_, err = srv.Push(pid, "fix", collabtest.PushCommit{Message: "Fix", AuthorName: "Root", AuthorEmail: "root@example.com", Modified: []string{"README.md"}})
	require.NoError(t, err)
	issue, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Crash", Description: collab.Ptr("on save")})
	require.NoError(t, err)
	_, _, err = c.Issues.Update(ctx, pid, issue.ID, &collab.UpdateIssueOptions{Title: collab.Ptr("Crash on save")})
	require.NoError(t, err)
	_, _, err = c.Issues.Update(ctx, pid, issue.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)})
	require.NoError(t, err)
	_, _, err = c.Issues.Update(ctx, pid, issue.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueReopen)})
	require.NoError(t, err)
	_, _, err = c.Notes.CreateIssueNote(ctx, pid, issue.ID, &collab.CreateNoteOptions{Body: "Seen it."})
	require.NoError(t, err)
	mr, _, err := c.MergeRequests.Create(ctx, pid, &collab.CreateMergeRequestOptions{SourceBranch: "fix", TargetBranch: "master", Title: "Fix"})
	require.NoError(t, err)
	_, _, err = c.Notes.CreateMergeRequestNote(ctx, pid, mr.ID, &collab.CreateNoteOptions{Body: "Looks good."})
	require.NoError(t, err)
	build := srv.Seed.Build(project, collabtest.BuildSpec{Name: "rspec", Ref: "fix"}).ID
	srv.SetBuildStatus(build, "running")
	srv.SetBuildStatus(build, "failed")
	_, _, err = c.MergeRequests.Merge(ctx, pid, mr.ID, nil)
	require.NoError(t, err)
	require.NoError(t, srv.WaitIdle(ctx))

	kinds := map[webhook.Kind]int{}
	for _, d := range srv.Deliveries() {
		assert.Equal(t, "application/json", d.Header.Get("Content-Type"))
		assert.Equal(t, d.Event, d.Header.Get(webhook.HeaderEvent))
		ev, err := webhook.ParsePayload(d.Header, d.Body)
		require.NoError(t, err, "%s: %s", d.Event, d.Body)
		_, raw := ev.(*webhook.RawEvent)
		require.False(t, raw, "%s is a known kind", d.Event)
		kinds[ev.Kind()]++
		assert.Empty(t, webhook.ExtraKeys(ev), "%s: keys without a field", d.Event)
		out, err := json.Marshal(ev)
		require.NoError(t, err)
		assert.Empty(t, webhook.SameJSON(d.Body, out), "%s: round trip", d.Event)
		assertDatabaseTimes(t, d.Body)
	}
	for _, k := range []webhook.Kind{webhook.KindPush, webhook.KindIssue, webhook.KindMergeRequest, webhook.KindNote, webhook.KindBuild} {
		assert.Positive(t, kinds[k], "no %s delivered", k)
	}
	t.Logf("decoded deliveries by kind: %v", kinds)
}

// assertDatabaseTimes checks that created_at and updated_at use the
// server's own layout, "2016-06-21 09:14:07 UTC".
func assertDatabaseTimes(t *testing.T, body []byte) {
	t.Helper()
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				if s, ok := val.(string); ok && (k == "created_at" || k == "updated_at") {
					_, err := time.Parse("2006-01-02 15:04:05 MST", s)
					assert.NoError(t, err, "%s %q", k, s)
					assert.True(t, strings.HasSuffix(s, " UTC"), "%s %q", k, s)
				}
				walk(val)
			}
		case []any:
			for _, val := range x {
				walk(val)
			}
		}
	}
	var v any
	require.NoError(t, json.Unmarshal(body, &v))
	walk(v)
}
