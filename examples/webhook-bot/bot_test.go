package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/webhook"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBotReactions sends the bot hand-made deliveries, as the server would,
// and checks its reactions on the fake server.
func TestBotReactions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := collabtest.NewTestServer(t)
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	require.NoError(t, err)
	p := srv.Seed.Project(srv.Admin, "Webshop", collab.InternalVisibility)
	pid := p.ID
	bare := srv.Seed.Issue(p, srv.Admin, "Crash on save").ID
	labelled := srv.Seed.Issue(p, srv.Admin, "Slow search", srv.Seed.Label(p, "performance", "#f0ad4e")).ID
	srv.Seed.Branch(p, "fix-save")
	mr := srv.Seed.MergeRequest(p, srv.Admin, "fix-save", "master", "Fix save").ID

	reports := make(chan string, 10)
	b := &bot{c: c, self: "root", label: "needs-triage", report: func(s string) { reports <- s }}
	h, err := webhook.NewHandler(b.options("s3cret", nil))
	require.NoError(t, err)
	done := make(chan error)
	go func() { done <- h.Run(ctx) }()
	hook := httptest.NewServer(h)
	defer hook.Close()

	send := func(kind webhook.Kind, ev any) {
		body, err := json.Marshal(ev)
		require.NoError(t, err)
		req, _ := http.NewRequest(http.MethodPost, hook.URL, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(webhook.HeaderEvent, string(kind))
		req.Header.Set(webhook.HeaderToken, "s3cret")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	issueEvent := func(id int, title string) *webhook.IssueEvent {
		is, _, err := c.Issues.Get(ctx, pid, id)
		require.NoError(t, err)
		return &webhook.IssueEvent{ObjectKind: "issue", User: &webhook.User{Username: "alice"},
			ObjectAttributes: &webhook.IssueAttributes{ID: id, IID: is.IID, ProjectID: pid, Title: title, State: "opened", Action: "open"}}
	}

	send(webhook.KindIssue, issueEvent(bare, "Crash on save"))
	send(webhook.KindIssue, issueEvent(bare, "Crash on save")) // a repeat: suppressed
	assert.Equal(t, `#1 "Crash on save": labelled ~needs-triage and commented`, <-reports)
	send(webhook.KindIssue, issueEvent(labelled, "Slow search"))
	assert.Equal(t, `#2 "Slow search" already has labels performance: left alone`, <-reports)

	is, _, err := c.Issues.Get(ctx, pid, bare)
	require.NoError(t, err)
	assert.Equal(t, []string{"needs-triage"}, is.Labels)
	notes, _, err := c.Notes.ListIssueNotes(ctx, pid, bare, nil)
	require.NoError(t, err)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0].Body, "`/close`")

	note := func(user, body string) *webhook.NoteEvent {
		return &webhook.NoteEvent{ObjectKind: "note", User: &webhook.User{Username: user}, ProjectID: pid,
			ObjectAttributes: &webhook.NoteAttributes{ID: len(user), Note: body, NoteableType: webhook.NoteableIssue},
			Issue:            &webhook.IssueAttributes{ID: bare, IID: 1, ProjectID: pid, State: "opened"}}
	}
	send(webhook.KindNote, note("root", "/close")) // the bot's own comment is no command
	send(webhook.KindNote, note("alice", "/close"))
	assert.Equal(t, "#1 closed on /close from @alice", <-reports)
	is, _, err = c.Issues.Get(ctx, pid, bare)
	require.NoError(t, err)
	assert.Equal(t, collab.IssueClosed, is.State)

	send(webhook.KindBuild, &webhook.BuildEvent{ObjectKind: "build", Ref: "fix-save", BuildID: 7, BuildName: "rspec",
		BuildStage: "test", BuildStatus: "failed", ProjectID: pid, SHA: "a93f7e2c1d0b9a8f"})
	assert.Equal(t, "!1: build rspec (#7) failed; noted on the merge request", <-reports)
	mrNotes, _, err := c.Notes.ListMergeRequestNotes(ctx, pid, mr, nil)
	require.NoError(t, err)
	require.Len(t, mrNotes, 1)
	assert.Equal(t, "Build rspec (#7) failed in stage test at a93f7e2.", mrNotes[0].Body)

	cancel()
	require.NoError(t, <-done)
	st := h.Stats()
	assert.Equal(t, int64(1), st.Duplicates)
	assert.Equal(t, int64(5), st.Handled)
	assert.Zero(t, st.DeadLettered)
}

// A note without a user (a synthesized one whose author the API left out)
// still closes its issue, with no panic.
func TestBotCloseFromUnknownUser(t *testing.T) {
	srv := collabtest.NewTestServer(t)
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken))
	require.NoError(t, err)
	p := srv.Seed.Project(srv.Admin, "Webshop", collab.InternalVisibility)
	pid := p.ID
	id := srv.Seed.Issue(p, srv.Admin, "Crash on save").ID
	var reports []string
	b := &bot{c: c, self: "root", label: "needs-triage", report: func(s string) { reports = append(reports, s) }}
	ev := &webhook.NoteEvent{ObjectKind: "note", ProjectID: pid,
		ObjectAttributes: &webhook.NoteAttributes{ID: 1, Note: "/close", NoteableType: webhook.NoteableIssue},
		Issue:            &webhook.IssueAttributes{ID: id, IID: 1, ProjectID: pid, State: "opened"}}
	require.NoError(t, b.onNote(context.Background(), ev))
	assert.Equal(t, []string{"#1 closed on /close from someone unknown"}, reports)
}
