package collab_test

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

func wantMR() *collab.MergeRequest {
	return &collab.MergeRequest{ID: 1, IID: 1, ProjectID: 3, Title: "test1", Description: collab.Ptr("fixed login page css paddings"), State: "merged",
		CreatedAt: ts("2016-07-08T08:16:06.171Z"), UpdatedAt: ts("2016-07-08T08:16:06.171Z"), TargetBranch: "master", SourceBranch: "test1",
		Author:          &collab.User{ID: 1, Name: "Administrator", Username: "admin", State: "active", Email: "admin@example.com", CreatedAt: ts("2012-04-29T08:46:00Z")},
		Assignee:        &collab.User{ID: 1, Name: "Administrator", Username: "admin", State: "active", WebURL: "https://collab.example.com/admin"},
		SourceProjectID: 2, TargetProjectID: 3, Labels: []string{"community", "docs"},
		Milestone: &collab.Milestone{ID: 5, IID: 1, ProjectID: 3, Title: "v2.0", Description: collab.Ptr("Assumenda aut placeat expedita exercitationem labore sunt enim earum."),
			State: "closed", CreatedAt: ts("2015-02-02T19:49:26.013Z"), UpdatedAt: ts("2015-02-02T19:49:26.013Z")},
		MergeWhenBuildSucceeds: true, MergeStatus: "can_be_merged", UserNotesCount: 1, ShouldRemoveSourceBranch: collab.Ptr(true),
		ForceRemoveSourceBranch: collab.Ptr(false),
		Changes: []*collab.Change{{OldPath: "VERSION", NewPath: "VERSION", AMode: "100644", BMode: "100644",
			Diff: "--- a/VERSION\n+++ b/VERSION\n@@ -1 +1 @@\n-1.9.7\n+1.9.8"}}}
}

func TestMergeRequestsUnit(t *testing.T) {
	ctx := context.Background()
	one := func(mr *collab.MergeRequest, _ *collab.Response, err error) (any, error) { return mr, err }
	runCallCases(t, "merge_requests_mr.json", wantMR(), []callCase{
		{"List", func(c *collab.Client) (any, error) {
			l, _, err := c.MergeRequests.List(ctx, "g/p.x", &collab.ListMergeRequestsOptions{IID: collab.Ptr(1), State: collab.Ptr(collab.MergeRequestMerged), OrderBy: collab.Ptr(collab.OrderByUpdatedAt), Sort: collab.Ptr(collab.SortAsc)})
			return l, err
		}, "GET", "projects/g%2Fp%2Ex/merge_requests", url.Values{"iid": {"1"}, "state": {"merged"}, "order_by": {"updated_at"}, "sort": {"asc"}}, true},
		{"Get", func(c *collab.Client) (any, error) { return one(c.MergeRequests.Get(ctx, 3, 1)) }, "GET", "projects/3/merge_requests/1", nil, false},
		{"Changes", func(c *collab.Client) (any, error) { return one(c.MergeRequests.Changes(ctx, 3, 1)) }, "GET", "projects/3/merge_requests/1/changes", nil, false},
		{"Create", func(c *collab.Client) (any, error) {
			return one(c.MergeRequests.Create(ctx, 3, &collab.CreateMergeRequestOptions{SourceBranch: "test1", TargetBranch: "master", Title: "test1",
				AssigneeID: collab.Ptr(1), Description: collab.Ptr("d"), TargetProjectID: collab.Ptr(3), Labels: collab.LabelNames{"community", "docs"}, MilestoneID: collab.Ptr(5)}))
		}, "POST", "projects/3/merge_requests", url.Values{"source_branch": {"test1"}, "target_branch": {"master"}, "title": {"test1"},
			"assignee_id": {"1"}, "description": {"d"}, "target_project_id": {"3"}, "labels": {"community,docs"}, "milestone_id": {"5"}}, false},
		{"Update", func(c *collab.Client) (any, error) {
			return one(c.MergeRequests.Update(ctx, 3, 1, &collab.UpdateMergeRequestOptions{TargetBranch: collab.Ptr("main"), AssigneeID: collab.Ptr(2), Title: collab.Ptr("t"),
				Description: collab.Ptr("d"), StateEvent: collab.Ptr(collab.MergeRequestClose), Labels: &collab.LabelNames{}, MilestoneID: collab.Ptr(0)}))
		}, "PUT", "projects/3/merge_requests/1", url.Values{"target_branch": {"main"}, "assignee_id": {"2"}, "title": {"t"}, "description": {"d"},
			"state_event": {"close"}, "labels": {""}, "milestone_id": {"0"}}, false},
		{"Merge", func(c *collab.Client) (any, error) {
			return one(c.MergeRequests.Merge(ctx, 3, 1, &collab.MergeMergeRequestOptions{MergeCommitMessage: collab.Ptr("Merge!"), ShouldRemoveSourceBranch: true,
				MergeWhenBuildSucceeds: collab.Ptr(true), SHA: collab.Ptr("abc123")}))
		}, "PUT", "projects/3/merge_requests/1/merge", url.Values{"merge_commit_message": {"Merge!"}, "should_remove_source_branch": {"true"},
			"merged_when_build_succeeds": {"true"}, "merge_when_build_succeeds": {"true"}, "sha": {"abc123"}}, false},
		{"MergePlain", func(c *collab.Client) (any, error) {
			return one(c.MergeRequests.Merge(ctx, 3, 1, &collab.MergeMergeRequestOptions{}))
		}, "PUT", "projects/3/merge_requests/1/merge", nil, false},
		{"MergeNil", func(c *collab.Client) (any, error) { return one(c.MergeRequests.Merge(ctx, 3, 1, nil)) }, "PUT", "projects/3/merge_requests/1/merge", nil, false},
		{"Cancel", func(c *collab.Client) (any, error) {
			return one(c.MergeRequests.CancelMergeWhenBuildSucceeds(ctx, 3, 1))
		}, "PUT", "projects/3/merge_requests/1/cancel_merge_when_build_succeeds", nil, false},
		{"Subscribe", func(c *collab.Client) (any, error) { return one(c.MergeRequests.Subscribe(ctx, 3, 1)) }, "POST", "projects/3/merge_requests/1/subscription", nil, false},
		{"Unsubscribe", func(c *collab.Client) (any, error) { return one(c.MergeRequests.Unsubscribe(ctx, 3, 1)) }, "DELETE", "projects/3/merge_requests/1/subscription", nil, false},
	})

	c, m := newMockClient(t)
	m.Reply(200, `[{"id": "ed899a2f4b50b4370feeea94676502b42383c746", "short_id": "ed899a2f4b5", "title": "Replace sanitize with escape once",
	  "author_name": "Dmitriy Zaporozhets", "author_email": "dzaporozhets@sphereconsultinginc.com", "created_at": "2012-09-20T11:50:22+03:00",
	  "message": "Replace sanitize with escape once"}]`)
	commits, _, err := c.MergeRequests.Commits(ctx, 3, 1)
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/3/merge_requests/1/commits", nil)
	assert.Equal(t, []*collab.MergeRequestCommit{{ID: "ed899a2f4b50b4370feeea94676502b42383c746", ShortID: "ed899a2f4b5", Title: "Replace sanitize with escape once",
		AuthorName: "Dmitriy Zaporozhets", AuthorEmail: "dzaporozhets@sphereconsultinginc.com", CreatedAt: ts("2012-09-20T11:50:22+03:00"),
		Message: "Replace sanitize with escape once"}}, commits)

	issue, err := os.ReadFile("testdata/issues_issue.json")
	require.NoError(t, err)
	m.Reply(200, `[`+string(issue)+`, {"id": "PROJ-123", "title": "Title of this issue"}]`)
	closes, _, err := c.MergeRequests.ClosesIssues(ctx, 3, 1, &collab.ListOptions{PerPage: 5})
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/3/merge_requests/1/closes_issues", url.Values{"per_page": {"5"}})
	require.Len(t, closes, 2)
	assert.Equal(t, wantIssue(), closes[0].Issue)
	assert.Equal(t, wantIssue().Title, closes[0].Title, "the title is read for both shapes")
	assert.Empty(t, closes[0].ExternalID)
	assert.Nil(t, closes[1].Issue)
	assert.Equal(t, "PROJ-123", closes[1].ExternalID)
	assert.Equal(t, "Title of this issue", closes[1].Title)
	var ci collab.ClosingIssue
	assert.Error(t, json.Unmarshal([]byte(`[]`), &ci))

	m.Reply(200, ``)
	_, err = c.MergeRequests.Delete(ctx, 3, 1)
	require.NoError(t, err)
	m.AssertRequest("DELETE", "projects/3/merge_requests/1", nil)

	for status, sentinel := range map[int]error{401: collab.ErrUnauthorized, 405: collab.ErrMethodNotAllowed, 406: collab.ErrNotAcceptable, 409: collab.ErrConflict} {
		m.Reply(status, `{"message":"x"}`)
		_, _, err = c.MergeRequests.Merge(ctx, 3, 1, nil)
		assert.ErrorIs(t, err, sentinel, "merge %d", status)
	}
	before := m.Count()
	for _, bad := range []*collab.CreateMergeRequestOptions{nil, {Title: "x", TargetBranch: "m"}, {SourceBranch: "a", Title: "x"}, {SourceBranch: "a", TargetBranch: "b"}} {
		_, _, err = c.MergeRequests.Create(ctx, 3, bad)
		assert.Error(t, err)
	}
	assert.Equal(t, before, m.Count())
}

func TestMergeRequestsAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	dev := srv.AddUser("dev", false)
	guest := srv.AddUser("guest", false)
	project := srv.Seed.Project(srv.Admin, "Shop", collab.InternalVisibility)
	pid := project.ID
	srv.Seed.Member(project, dev, collab.DeveloperAccess)
	srv.Seed.Member(project, guest, collab.GuestAccess)
	dc, gc := clientAs(t, srv, dev.Token), clientAs(t, srv, guest.Token)
	head := srv.Seed.Branch(project, "feature/cart").Commit.ID
	fixes, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Cart is empty"})
	require.NoError(t, err)

	mr, _, err := dc.MergeRequests.Create(ctx, pid, &collab.CreateMergeRequestOptions{SourceBranch: "feature/cart", TargetBranch: "master",
		Title: "Add cart", Description: collab.Ptr("Fixes #1"), Labels: collab.LabelNames{"feature"}})
	require.NoError(t, err)
	assert.Equal(t, collab.MergeRequestOpened, mr.State)
	assert.EqualValues(t, pid, mr.SourceProjectID)
	_, _, err = dc.MergeRequests.Create(ctx, pid, &collab.CreateMergeRequestOptions{SourceBranch: "nope", TargetBranch: "master", Title: "x"})
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	_, _, err = dc.MergeRequests.Create(ctx, pid, &collab.CreateMergeRequestOptions{SourceBranch: "feature/cart", TargetBranch: "master", Title: "dup"})
	assert.ErrorIs(t, err, collab.ErrConflict)

	labels, _, err := c.Labels.List(ctx, pid, nil)
	require.NoError(t, err)
	require.Len(t, labels, 1)
	assert.Equal(t, 1, labels[0].OpenMergeRequestsCount)

	closes, _, err := c.MergeRequests.ClosesIssues(ctx, pid, mr.ID, nil)
	require.NoError(t, err)
	require.Len(t, closes, 1)
	require.NotNil(t, closes[0].Issue)
	assert.Equal(t, fixes.ID, closes[0].Issue.ID)
	assert.Equal(t, fixes.Title, closes[0].Title)
	commits, _, err := c.MergeRequests.Commits(ctx, pid, mr.ID)
	require.NoError(t, err)
	require.Len(t, commits, 1)
	assert.Equal(t, head, commits[0].ID)
	changes, _, err := c.MergeRequests.Changes(ctx, pid, mr.ID)
	require.NoError(t, err)
	assert.NotEmpty(t, changes.Changes)

	// Merge rules.
	_, _, err = gc.MergeRequests.Merge(ctx, pid, mr.ID, nil)
	assert.ErrorIs(t, err, collab.ErrUnauthorized)
	_, _, err = dc.MergeRequests.Merge(ctx, pid, mr.ID, &collab.MergeMergeRequestOptions{SHA: collab.Ptr("0000")})
	assert.ErrorIs(t, err, collab.ErrConflict)
	assert.ErrorContains(t, err, "SHA does not match HEAD of source branch")
	srv.SetMergeConflict(mr.ID, true)
	_, _, err = dc.MergeRequests.Merge(ctx, pid, mr.ID, nil)
	assert.ErrorIs(t, err, collab.ErrNotAcceptable)
	srv.SetMergeConflict(mr.ID, false)

	// Merge when the build succeeds.
	build := srv.Seed.Build(project, collabtest.BuildSpec{Ref: "feature/cart", Status: "running"}).ID
	waiting, _, err := dc.MergeRequests.Merge(ctx, pid, mr.ID, &collab.MergeMergeRequestOptions{MergeWhenBuildSucceeds: collab.Ptr(true), SHA: collab.Ptr(head)})
	require.NoError(t, err)
	assert.Equal(t, collab.MergeRequestOpened, waiting.State)
	assert.True(t, waiting.MergeWhenBuildSucceeds)
	cancelled, _, err := dc.MergeRequests.CancelMergeWhenBuildSucceeds(ctx, pid, mr.ID)
	require.NoError(t, err)
	assert.False(t, cancelled.MergeWhenBuildSucceeds)
	_, _, err = dc.MergeRequests.CancelMergeWhenBuildSucceeds(ctx, pid, mr.ID)
	assert.ErrorIs(t, err, collab.ErrNotAcceptable, "the flag is not set")
	_, _, err = gc.MergeRequests.CancelMergeWhenBuildSucceeds(ctx, pid, mr.ID)
	assert.ErrorIs(t, err, collab.ErrUnauthorized)
	_, _, err = dc.MergeRequests.Merge(ctx, pid, mr.ID, &collab.MergeMergeRequestOptions{MergeWhenBuildSucceeds: collab.Ptr(true), ShouldRemoveSourceBranch: true})
	require.NoError(t, err)
	srv.SetBuildStatus(build, "success")
	merged, _, err := c.MergeRequests.Get(ctx, pid, mr.ID)
	require.NoError(t, err)
	assert.Equal(t, collab.MergeRequestMerged, merged.State, "merged once the build succeeded")
	_, _, err = c.Branches.Get(ctx, pid, "feature/cart")
	assert.ErrorIs(t, err, collab.ErrNotFound, "the source branch was removed")
	is, _, err := c.Issues.Get(ctx, pid, fixes.ID)
	require.NoError(t, err)
	assert.Equal(t, collab.IssueClosed, is.State, "merging closed the issue it fixes")
	_, _, err = dc.MergeRequests.Merge(ctx, pid, mr.ID, nil)
	assert.ErrorIs(t, err, collab.ErrMethodNotAllowed, "already merged")
	_, _, err = dc.MergeRequests.CancelMergeWhenBuildSucceeds(ctx, pid, mr.ID)
	assert.ErrorIs(t, err, collab.ErrMethodNotAllowed)

	// State events, WIP, subscriptions, delete.
	srv.Seed.Branch(project, "wip")
	wip, _, err := dc.MergeRequests.Create(ctx, pid, &collab.CreateMergeRequestOptions{SourceBranch: "wip", TargetBranch: "master", Title: "WIP: later"})
	require.NoError(t, err)
	assert.True(t, wip.WorkInProgress)
	_, _, err = dc.MergeRequests.Merge(ctx, pid, wip.ID, nil)
	assert.ErrorIs(t, err, collab.ErrMethodNotAllowed)
	closed, _, err := dc.MergeRequests.Update(ctx, pid, wip.ID, &collab.UpdateMergeRequestOptions{StateEvent: collab.Ptr(collab.MergeRequestClose)})
	require.NoError(t, err)
	assert.Equal(t, collab.MergeRequestClosed, closed.State)
	reopened, _, err := dc.MergeRequests.Update(ctx, pid, wip.ID, &collab.UpdateMergeRequestOptions{StateEvent: collab.Ptr(collab.MergeRequestReopen), Title: collab.Ptr("Ready")})
	require.NoError(t, err)
	assert.Equal(t, collab.MergeRequestReopened, reopened.State)
	list, _, err := c.MergeRequests.List(ctx, pid, &collab.ListMergeRequestsOptions{State: collab.Ptr(collab.MergeRequestOpened)})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, wip.ID, list[0].ID)
	list, _, err = c.MergeRequests.List(ctx, pid, &collab.ListMergeRequestsOptions{State: collab.Ptr(collab.MergeRequestMerged)})
	require.NoError(t, err)
	require.Len(t, list, 1)
	viaEvent, _, err := dc.MergeRequests.Update(ctx, pid, wip.ID, &collab.UpdateMergeRequestOptions{StateEvent: collab.Ptr(collab.MergeRequestMerge)})
	require.NoError(t, err)
	assert.Equal(t, collab.MergeRequestMerged, viaEvent.State)

	sub, _, err := gc.MergeRequests.Subscribe(ctx, pid, wip.ID)
	require.NoError(t, err)
	assert.True(t, sub.Subscribed)
	_, _, err = gc.MergeRequests.Subscribe(ctx, pid, wip.ID)
	assert.ErrorIs(t, err, collab.ErrNotModified)
	_, _, err = gc.MergeRequests.Unsubscribe(ctx, pid, wip.ID)
	require.NoError(t, err)
	_, _, err = gc.MergeRequests.Unsubscribe(ctx, pid, wip.ID)
	assert.ErrorIs(t, err, collab.ErrNotModified)

	_, err = dc.MergeRequests.Delete(ctx, pid, wip.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound, "only admins and owners delete")
	_, err = c.MergeRequests.Delete(ctx, pid, wip.ID)
	require.NoError(t, err)
	_, _, err = c.MergeRequests.Get(ctx, pid, wip.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	n := 0
	for _, err := range c.MergeRequests.All(ctx, pid, nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 1, n)
	for _, err := range c.MergeRequests.AllClosesIssues(ctx, pid, mr.ID, nil) {
		require.NoError(t, err)
	}
}

// TestClosingIssueExternalEntryReadsSafely: an external-tracker entry has no
// Issue, and reading what it has must not panic; JSON goes back out in the
// shape it came in.
func TestClosingIssueExternalEntryReadsSafely(t *testing.T) {
	var ci collab.ClosingIssue
	require.NoError(t, json.Unmarshal([]byte(`{"id":"PROJ-7","title":"Broken"}`), &ci))
	assert.NotPanics(t, func() {
		assert.Nil(t, ci.Issue)
		assert.Equal(t, "PROJ-7", ci.ExternalID)
		assert.Equal(t, "Broken", ci.Title)
	})
	out, err := json.Marshal(ci)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"PROJ-7","title":"Broken"}`, string(out))

	require.NoError(t, json.Unmarshal([]byte(`{"id":5,"iid":2,"title":"Ours"}`), &ci))
	require.NotNil(t, ci.Issue)
	assert.Equal(t, 5, ci.Issue.ID)
	assert.Equal(t, "Ours", ci.Title)
	assert.Empty(t, ci.ExternalID, "decoding replaces the whole value")
}
