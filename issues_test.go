package collab_test

import (
	"context"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
)

func wantIssue() *collab.Issue {
	return &collab.Issue{ID: 77, IID: 6, ProjectID: 4, Title: "Consequatur vero maxime deserunt laboriosam est voluptas dolorem.",
		Description: collab.Ptr("Ratione dolores corrupti mollitia soluta quia."), State: "opened",
		CreatedAt: ts("2016-01-04T15:31:51.081Z"), UpdatedAt: ts("2016-01-04T15:31:51.081Z"), Labels: []string{"bug", "critical"},
		Milestone: &collab.Milestone{ID: 1, IID: 1, ProjectID: 4, Title: "v1.0", Description: collab.Ptr("Launch"), State: "closed", DueDate: ts("2016-02-01"),
			CreatedAt: ts("2016-01-04T15:31:39.996Z"), UpdatedAt: ts("2016-01-04T15:31:39.996Z")},
		Assignee: &collab.User{ID: 1, Name: "Administrator", Username: "root", State: "active",
			AvatarURL: collab.Ptr("http://www.gravatar.com/avatar/e64c7d89f26bd1972efa854d13d7dd61?s=80&d=identicon"), WebURL: "http://example.com/root"},
		Author: &collab.User{ID: 18, Name: "Dr. Luella Kovacek", Username: "eileen.lowe", State: "active",
			AvatarURL: collab.Ptr("http://www.gravatar.com/avatar/c7c0df31f5a2e3d2e1c2b9e4cd4d3d4c?s=80&d=identicon"), WebURL: "http://example.com/eileen.lowe"},
		Subscribed: true, UserNotesCount: 1, Upvotes: 4, Downvotes: 1, DueDate: ts("2016-07-22")}
}

func TestIssuesUnit(t *testing.T) {
	ctx := context.Background()
	created := time.Date(2016, 3, 1, 10, 0, 0, 0, time.UTC)
	listOpt := &collab.ListIssuesOptions{IID: collab.Ptr(6), State: collab.Ptr(collab.IssueOpened), Labels: []string{"bug", "p1"}, Milestone: collab.Ptr("v1.0"),
		OrderBy: collab.Ptr(collab.OrderByUpdatedAt), Sort: collab.Ptr(collab.SortAsc), ListOptions: collab.ListOptions{PerPage: 50}}
	listWant := url.Values{"iid": {"6"}, "state": {"opened"}, "labels": {"bug,p1"}, "milestone": {"v1.0"}, "order_by": {"updated_at"}, "sort": {"asc"}, "per_page": {"50"}}
	one := func(is *collab.Issue, _ *collab.Response, err error) (any, error) { return is, err }
	many := func(is []*collab.Issue, _ *collab.Response, err error) (any, error) { return is, err }
	runCallCases(t, "issues_issue.json", wantIssue(), []callCase{
		{"ListMine", func(c *collab.Client) (any, error) { return many(c.Issues.ListMine(ctx, listOpt)) }, "GET", "issues", listWant, true},
		{"List", func(c *collab.Client) (any, error) { return many(c.Issues.List(ctx, "g/p.q", listOpt)) }, "GET", "projects/g%2Fp%2Eq/issues", listWant, true},
		{"Get", func(c *collab.Client) (any, error) { return one(c.Issues.Get(ctx, 4, 77)) }, "GET", "projects/4/issues/77", nil, false},
		{"Create", func(c *collab.Client) (any, error) {
			return one(c.Issues.Create(ctx, 4, &collab.CreateIssueOptions{Title: "Crash", Description: collab.Ptr("on save"), AssigneeID: collab.Ptr(1),
				MilestoneID: collab.Ptr(2), Labels: []string{"bug", "ui"}, CreatedAt: &created}))
		}, "POST", "projects/4/issues", url.Values{"title": {"Crash"}, "description": {"on save"}, "assignee_id": {"1"},
			"milestone_id": {"2"}, "labels": {"bug,ui"}, "created_at": {"2016-03-01T10:00:00Z"}}, false},
		{"Update", func(c *collab.Client) (any, error) {
			return one(c.Issues.Update(ctx, 4, 77, &collab.UpdateIssueOptions{Title: collab.Ptr("T"), Description: collab.Ptr("D"), AssigneeID: collab.Ptr(3),
				MilestoneID: collab.Ptr(0), Labels: &collab.LabelNames{"x"}, StateEvent: collab.Ptr(collab.IssueClose), UpdatedAt: &created}))
		}, "PUT", "projects/4/issues/77", url.Values{"title": {"T"}, "description": {"D"}, "assignee_id": {"3"}, "milestone_id": {"0"},
			"labels": {"x"}, "state_event": {"close"}, "updated_at": {"2016-03-01T10:00:00Z"}}, false},
		{"Move", func(c *collab.Client) (any, error) { return one(c.Issues.Move(ctx, 4, 77, 9)) }, "POST", "projects/4/issues/77/move", url.Values{"to_project_id": {"9"}}, false},
		{"Subscribe", func(c *collab.Client) (any, error) { return one(c.Issues.Subscribe(ctx, 4, 77)) }, "POST", "projects/4/issues/77/subscription", nil, false},
		{"Unsubscribe", func(c *collab.Client) (any, error) { return one(c.Issues.Unsubscribe(ctx, 4, 77)) }, "DELETE", "projects/4/issues/77/subscription", nil, false},
	})
	fixture, err := os.ReadFile("testdata/issues_issue.json")
	require.NoError(t, err)
	c, m := newMockClient(t)
	m.Reply(200, string(fixture))
	_, err = c.Issues.Delete(ctx, 4, 77)
	require.NoError(t, err)
	m.AssertRequest("DELETE", "projects/4/issues/77", nil)
	m.Reply(200, string(fixture))
	_, _, err = c.Issues.Update(ctx, 4, 77, &collab.UpdateIssueOptions{Labels: &collab.LabelNames{}})
	require.NoError(t, err)
	m.AssertRequest("PUT", "projects/4/issues/77", url.Values{"labels": {""}})
	m.Reply(304, ``)
	_, _, err = c.Issues.Subscribe(ctx, 4, 77)
	assert.ErrorIs(t, err, collab.ErrNotModified)
	m.Reply(400, `{"message":"400 (Bad request) \"Cannot move issue to project it originates from!\""}`)
	_, _, err = c.Issues.Move(ctx, 4, 77, 4)
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	before := m.Count()
	_, _, err = c.Issues.Create(ctx, 4, &collab.CreateIssueOptions{})
	assert.Error(t, err)
	_, _, err = c.Issues.Create(ctx, 4, nil)
	assert.Error(t, err)
	assert.Equal(t, before, m.Count())
}

func TestIssuesAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	alice := srv.AddUser("alice", false)
	bob := srv.AddUser("bob", false)
	ac, bc := clientAs(t, srv, alice.Token), clientAs(t, srv, bob.Token)
	pid := srv.Seed.Project(alice, "Tracker", collab.InternalVisibility).ID
	other := srv.Seed.Project(alice, "Other", collab.InternalVisibility).ID

	backdate := time.Date(2015, 5, 1, 8, 0, 0, 0, time.UTC)
	is, _, err := ac.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Crash on save", Labels: []string{"bug", "ui"}, AssigneeID: collab.Ptr(bob.ID), CreatedAt: &backdate})
	require.NoError(t, err)
	assert.Equal(t, 1, is.IID)
	assert.Equal(t, collab.IssueOpened, is.State)
	assert.True(t, is.CreatedAt.Equal(backdate), "owners may backdate")
	assert.Equal(t, "bob", is.Assignee.Username)
	assert.True(t, is.Subscribed, "authors are subscribed")
	second, _, err := bc.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Slow", Labels: []string{"perf"}})
	require.NoError(t, err)
	assert.Equal(t, 2, second.IID)
	_, _, err = ac.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "x", AssigneeID: collab.Ptr(999999)})
	assert.ErrorIs(t, err, collab.ErrNotFound)

	p, _, err := c.Projects.Get(ctx, pid)
	require.NoError(t, err)
	assert.Equal(t, 2, p.OpenIssuesCount)

	list, _, err := ac.Issues.List(ctx, pid, &collab.ListIssuesOptions{Labels: []string{"bug"}})
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, is.ID, list[0].ID)
	list, _, err = ac.Issues.List(ctx, pid, &collab.ListIssuesOptions{IID: collab.Ptr(2)})
	require.NoError(t, err)
	require.Len(t, list, 1)
	list, _, err = ac.Issues.List(ctx, pid, &collab.ListIssuesOptions{OrderBy: collab.Ptr(collab.OrderByCreatedAt), Sort: collab.Ptr(collab.SortAsc)})
	require.NoError(t, err)
	assert.Equal(t, []int{is.ID, second.ID}, []int{list[0].ID, list[1].ID})
	_, _, err = ac.Issues.List(ctx, pid, &collab.ListIssuesOptions{OrderBy: collab.Ptr[collab.OrderBy]("title")})
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	mine, _, err := bc.Issues.ListMine(ctx, nil)
	require.NoError(t, err)
	require.Len(t, mine, 1)
	assert.Equal(t, second.ID, mine[0].ID)

	closed, _, err := ac.Issues.Update(ctx, pid, is.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose), Title: collab.Ptr("Crash on save (fixed)")})
	require.NoError(t, err)
	assert.Equal(t, collab.IssueClosed, closed.State)
	assert.True(t, closed.UpdatedAt.After(is.UpdatedAt.Time))
	list, _, err = ac.Issues.List(ctx, pid, &collab.ListIssuesOptions{State: collab.Ptr(collab.IssueClosed)})
	require.NoError(t, err)
	require.Len(t, list, 1)
	reopened, _, err := ac.Issues.Update(ctx, pid, is.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueReopen)})
	require.NoError(t, err)
	assert.Equal(t, collab.IssueOpened, reopened.State)
	_, _, err = ac.Issues.Update(ctx, pid, is.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr[collab.IssueStateEvent]("explode")})
	assert.ErrorIs(t, err, collab.ErrBadRequest)

	// Subscriptions are per user.
	_, _, err = ac.Issues.Subscribe(ctx, pid, is.ID)
	assert.ErrorIs(t, err, collab.ErrNotModified)
	sub, _, err := bc.Issues.Subscribe(ctx, pid, is.ID)
	require.NoError(t, err)
	assert.True(t, sub.Subscribed)
	_, _, err = bc.Issues.Subscribe(ctx, pid, is.ID)
	assert.ErrorIs(t, err, collab.ErrNotModified)
	unsub, _, err := bc.Issues.Unsubscribe(ctx, pid, is.ID)
	require.NoError(t, err)
	assert.False(t, unsub.Subscribed)
	_, _, err = bc.Issues.Unsubscribe(ctx, pid, is.ID)
	assert.ErrorIs(t, err, collab.ErrNotModified)

	// Move: labels matched by name in the target.
	_, _, err = ac.Issues.Move(ctx, pid, is.ID, pid)
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	_, _, err = ac.Issues.Move(ctx, pid, is.ID, 999999)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, _, err = ac.Issues.Create(ctx, other, &collab.CreateIssueOptions{Title: "seed", Labels: []string{"bug"}})
	require.NoError(t, err)
	moved, _, err := ac.Issues.Move(ctx, pid, is.ID, other)
	require.NoError(t, err)
	assert.Equal(t, other, moved.ProjectID)
	assert.Equal(t, []string{"bug"}, moved.Labels, "ui does not exist in the target")
	orig, _, err := ac.Issues.Get(ctx, pid, is.ID)
	require.NoError(t, err)
	assert.Equal(t, collab.IssueClosed, orig.State)

	// Delete: owner or admin only, 404 otherwise, and soft.
	_, err = bc.Issues.Delete(ctx, pid, second.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, err = ac.Issues.Delete(ctx, pid, second.ID)
	require.NoError(t, err)
	_, _, err = ac.Issues.Get(ctx, pid, second.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, err = ac.Issues.Delete(ctx, pid, second.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound)

	events, _, err := ac.Projects.ListEvents(ctx, pid, nil)
	require.NoError(t, err)
	var actions []string
	for _, e := range events {
		if e.TargetType != nil && *e.TargetType == "Issue" {
			actions = append(actions, e.ActionName)
		}
	}
	assert.Equal(t, []string{"closed", "opened", "closed", "opened", "opened"}, actions, "newest first")

	n := 0
	for _, err := range ac.Issues.All(ctx, pid, nil, collab.Prefetch(2)) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 1, n)
	n = 0
	for _, err := range ac.Issues.AllMine(ctx, nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 3, n)
}

// TestGetByIID checks both GetByIID methods: the iid filter they send, that
// they pick the record with that iid even from a server that ignored the
// filter, and that none is an error matching ErrNotFound.
func TestGetByIID(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)

	m.Reply(200, `[{"id": 77, "iid": 6, "title": "six"}]`)
	is, _, err := c.Issues.GetByIID(ctx, "g/p", 6)
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/g%2Fp/issues", url.Values{"iid": {"6"}})
	assert.Equal(t, 77, is.ID)

	m.Reply(200, `[{"id": 70, "iid": 1}, {"id": 77, "iid": 6}, {"id": 80, "iid": 7}]`)
	is, _, err = c.Issues.GetByIID(ctx, 4, 6)
	require.NoError(t, err)
	assert.Equal(t, 77, is.ID, "the record with that iid, not the first")

	for _, body := range []string{`[]`, `[{"id": 6, "iid": 1}]`} {
		m.Reply(200, body)
		is, resp, err := c.Issues.GetByIID(ctx, 4, 6)
		assert.Nil(t, is)
		assert.NotNil(t, resp)
		assert.ErrorIs(t, err, collab.ErrNotFound)
		assert.EqualError(t, err, "collab: project 4 has no issue #6: collab: not found")
	}
	m.Reply(500, `{"message":"500 Internal Server Error"}`)
	_, _, err = c.Issues.GetByIID(ctx, 4, 6)
	assert.ErrorIs(t, err, collab.ErrServer)

	m.Reply(200, `[{"id": 12, "iid": 3, "title": "three"}]`)
	mr, _, err := c.MergeRequests.GetByIID(ctx, 4, 3)
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/4/merge_requests", url.Values{"iid": {"3"}, "state": {"all"}})
	assert.Equal(t, 12, mr.ID)
	m.Reply(200, `[]`)
	_, _, err = c.MergeRequests.GetByIID(ctx, "g/p", 3)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	assert.EqualError(t, err, "collab: project g/p has no merge request !3: collab: not found")
}

// TestGetByIIDAgainstFake tells ids and iids apart in two projects, where the
// same iid names different records and no id equals its iid.
func TestGetByIIDAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	aProject := srv.Seed.Project(srv.Admin, "A", collab.PrivateVisibility)
	a := aProject.ID
	b := srv.Seed.Project(srv.Admin, "B", collab.PrivateVisibility).ID
	ids := map[int][]int{}
	for _, pid := range []int{a, b, a} {
		is, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "t"})
		require.NoError(t, err)
		assert.NotEqual(t, is.ID, is.IID)
		ids[pid] = append(ids[pid], is.ID)
	}
	for pid, want := range ids {
		for i, id := range want {
			is, _, err := c.Issues.GetByIID(ctx, pid, i+1)
			require.NoError(t, err)
			assert.Equal(t, id, is.ID, "project %d #%d", pid, i+1)
		}
	}
	closed, _, err := c.Issues.Update(ctx, a, ids[a][1], &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)})
	require.NoError(t, err)
	is, _, err := c.Issues.GetByIID(ctx, a, 2)
	require.NoError(t, err, "closed issues are found too")
	assert.Equal(t, closed.ID, is.ID)
	_, _, err = c.Issues.GetByIID(ctx, b, 2)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, _, err = c.Issues.GetByIID(ctx, 999999, 1)
	assert.ErrorIs(t, err, collab.ErrNotFound, "a missing project")

	srv.Seed.Branch(aProject, "f1")
	srv.Seed.Branch(aProject, "f2")
	first, _, err := c.MergeRequests.Create(ctx, a, &collab.CreateMergeRequestOptions{SourceBranch: "f1", TargetBranch: "master", Title: "one"})
	require.NoError(t, err)
	second, _, err := c.MergeRequests.Create(ctx, a, &collab.CreateMergeRequestOptions{SourceBranch: "f2", TargetBranch: "master", Title: "two"})
	require.NoError(t, err)
	_, _, err = c.MergeRequests.Update(ctx, a, first.ID, &collab.UpdateMergeRequestOptions{StateEvent: collab.Ptr(collab.MergeRequestClose)})
	require.NoError(t, err)
	for iid, want := range map[int]int{1: first.ID, 2: second.ID} {
		mr, _, err := c.MergeRequests.GetByIID(ctx, a, iid)
		require.NoError(t, err)
		assert.Equal(t, want, mr.ID, "!%d", iid)
	}
	_, _, err = c.MergeRequests.GetByIID(ctx, a, 3)
	assert.ErrorIs(t, err, collab.ErrNotFound)
}
