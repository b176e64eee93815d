package collab_test

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
)

// calls lists the method and escaped path of every recorded request.
func calls(m mock) []string {
	var out []string
	for _, r := range m.Calls() {
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

func TestLabelHelpersUnit(t *testing.T) {
	ctx := context.Background()
	const is = "/api/v3/projects/g%2Fp/issues/7"
	c, m := newMockClient(t)
	m.Reply(200, `{"id": 7, "labels": ["bug"], "updated_at": "2016-06-21T09:14:07Z"}`).
		Reply(200, `{"id": 7, "labels": ["bug"], "updated_at": "2016-06-21T09:14:07Z"}`).
		Reply(200, `{"id": 7, "labels": ["bug", "ui", "p1"], "updated_at": "2016-06-21T09:15:00Z"}`)
	got, _, err := c.Issues.AddLabels(ctx, "g/p", 7, "ui", "bug", "p1")
	require.NoError(t, err)
	assert.Equal(t, []string{"bug", "ui", "p1"}, got.Labels)
	assert.Equal(t, []string{"GET " + is, "GET " + is, "PUT " + is}, calls(m))
	m.AssertRequest("PUT", "projects/g%2Fp/issues/7", url.Values{"labels": {"bug,ui,p1"}})

	// Already there: one read, no write.
	c, m = newMockClient(t)
	m.Reply(200, `{"id": 7, "labels": ["bug", "ui"]}`)
	got, _, err = c.Issues.AddLabels(ctx, "g/p", 7, "ui")
	require.NoError(t, err)
	assert.Equal(t, []string{"bug", "ui"}, got.Labels)
	assert.Equal(t, 1, m.Count())

	// The labels move between the reads: merge again from the newer read.
	c, m = newMockClient(t)
	m.Reply(200, `{"id": 7, "labels": ["bug", "ui"], "updated_at": "2016-06-21T09:14:07Z"}`).
		Reply(200, `{"id": 7, "labels": ["bug", "ui", "docs"], "updated_at": "2016-06-21T09:14:09Z"}`).
		Reply(200, `{"id": 7, "labels": ["bug", "ui", "docs"], "updated_at": "2016-06-21T09:14:09Z"}`).
		Reply(200, `{"id": 7, "labels": ["bug", "docs"]}`)
	_, _, err = c.Issues.RemoveLabels(ctx, "g/p", 7, "ui", "absent")
	require.NoError(t, err)
	assert.Equal(t, 4, m.Count())
	m.AssertRequest("PUT", "projects/g%2Fp/issues/7", url.Values{"labels": {"bug,docs"}})

	// Removing the last label clears them.
	c, m = newMockClient(t)
	m.Reply(200, `{"id": 7, "labels": ["bug"]}`).Reply(200, `{"id": 7, "labels": ["bug"]}`).Reply(200, `{"id": 7, "labels": []}`)
	_, _, err = c.Issues.RemoveLabels(ctx, 5, 7, "bug")
	require.NoError(t, err)
	m.AssertRequest("PUT", "projects/5/issues/7", url.Values{"labels": {""}})

	// Labels that never settle: ErrConflict after five reads, nothing written.
	c, m = newMockClient(t)
	for i := range collab.MaxLabelReads {
		m.Reply(200, sprintf(`{"id": 7, "labels": ["l%d"]}`, i))
	}
	_, _, err = c.Issues.AddLabels(ctx, 5, 7, "bug")
	assert.ErrorIs(t, err, collab.ErrConflict)
	assert.Equal(t, collab.MaxLabelReads, m.Count())
	for _, r := range m.Calls() {
		assert.Equal(t, http.MethodGet, r.Method)
	}

	// Failures of either call are returned as they are.
	c, m = newMockClient(t)
	m.Reply(404, `{"message": "404 Not found"}`)
	_, _, err = c.MergeRequests.AddLabels(ctx, 5, 9, "bug")
	assert.ErrorIs(t, err, collab.ErrNotFound)
	m.Reply(200, `{"id": 9, "labels": []}`).Reply(200, `{"id": 9, "labels": []}`).Reply(403, `{"message": "403 Forbidden"}`)
	_, _, err = c.MergeRequests.AddLabels(ctx, 5, 9, "bug")
	assert.ErrorIs(t, err, collab.ErrForbidden)
	m.AssertRequest("PUT", "projects/5/merge_requests/9", url.Values{"labels": {"bug"}})
	m.Reply(200, `{"id": 9, "labels": ["a", "b"]}`).Reply(200, `{"id": 9, "labels": ["a", "b"]}`).Reply(200, `{"id": 9, "labels": ["b"]}`)
	mr, _, err := c.MergeRequests.RemoveLabels(ctx, 5, 9, "a")
	require.NoError(t, err)
	assert.Equal(t, []string{"b"}, mr.Labels)
	m.AssertRequest("PUT", "projects/5/merge_requests/9", url.Values{"labels": {"b"}})

	before := m.Count()
	for _, bad := range [][]string{nil, {""}, {" "}, {"a,b"}} {
		_, _, err = c.Issues.AddLabels(ctx, 5, 7, bad...)
		var ae *collab.ArgumentError
		assert.ErrorAs(t, err, &ae, "%q", bad)
		_, _, err = c.MergeRequests.RemoveLabels(ctx, 5, 9, bad...)
		assert.ErrorAs(t, err, &ae, "%q", bad)
	}
	_, _, err = c.Issues.AddLabels(ctx, 5, 0, "bug")
	assert.Error(t, err)
	assert.Equal(t, before, m.Count(), "bad input sends nothing")
}

// personTransport makes a person's edit, through another client, right
// after the helper's first read, as a person saving the issue at that moment.
type personTransport struct {
	base http.RoundTripper
	once sync.Once
	edit func()
}

func (p *personTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := p.base.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet {
		p.once.Do(p.edit)
	}
	return resp, err
}

// TestLabelHelpersRaceFake: a person adds a label between the helper's read
// and its write; the helper sees updated_at move, merges again, and both
// labels survive. The same for merge requests.
func TestLabelHelpersRaceFake(t *testing.T) {
	ctx := context.Background()
	admin, srv := newFakeClient(t)
	project := srv.Seed.Project(srv.Admin, "demo", collab.PrivateVisibility)
	pid := project.ID
	srv.Seed.Branch(project, "feature")
	is := srv.Seed.Issue(project, srv.Admin, "Crash on save").ID
	mrs, _, err := admin.MergeRequests.Create(ctx, pid, &collab.CreateMergeRequestOptions{SourceBranch: "feature", TargetBranch: "master", Title: "Fix"})
	require.NoError(t, err)
	mrID := mrs.ID

	edited := 0
	person := func() {
		edited++
		// The fake stamps updated_at in milliseconds: keep the edits apart.
		_, _, err := admin.Issues.Update(ctx, pid, is, &collab.UpdateIssueOptions{Labels: &collab.LabelNames{"ui"}})
		require.NoError(t, err)
		_, _, err = admin.MergeRequests.Update(ctx, pid, mrID, &collab.UpdateMergeRequestOptions{Labels: &collab.LabelNames{"ui"}})
		require.NoError(t, err)
	}
	pt := &personTransport{base: http.DefaultTransport, edit: person}
	bot, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken), collab.WithoutRetries(), collab.WithHTTPClient(&http.Client{Transport: pt}))
	require.NoError(t, err)

	got, _, err := bot.Issues.AddLabels(ctx, pid, is, "bug")
	require.NoError(t, err)
	assert.Equal(t, 1, edited)
	assert.ElementsMatch(t, []string{"ui", "bug"}, got.Labels, "the person's label survives")
	fresh, _, err := admin.Issues.Get(ctx, pid, is)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"ui", "bug"}, fresh.Labels)

	pt.once = sync.Once{}
	_, _, err = admin.MergeRequests.Update(ctx, pid, mrID, &collab.UpdateMergeRequestOptions{Labels: &collab.LabelNames{"old"}})
	require.NoError(t, err)
	mr, _, err := bot.MergeRequests.AddLabels(ctx, pid, mrID, "bug")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"ui", "bug"}, mr.Labels, "the person replaced old with ui; the helper added bug to that")
	mr, _, err = bot.MergeRequests.RemoveLabels(ctx, pid, mrID, "ui")
	require.NoError(t, err)
	assert.Equal(t, []string{"bug"}, mr.Labels)
}
