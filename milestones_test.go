package collab_test

import (
	"context"
	"net/url"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
)

func TestMilestonesUnit(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	msJSON := `{"id": 12, "iid": 3, "project_id": 16, "title": "10.0", "description": "Version", "due_date": "2013-11-29",
	  "state": "active", "updated_at": "2013-10-02T09:24:18Z", "created_at": "2013-10-02T09:24:18Z"}`
	want := &collab.Milestone{ID: 12, IID: 3, ProjectID: 16, Title: "10.0", Description: collab.Ptr("Version"), DueDate: ts("2013-11-29"), State: "active",
		UpdatedAt: ts("2013-10-02T09:24:18Z"), CreatedAt: ts("2013-10-02T09:24:18Z")}
	m.Reply(200, "["+msJSON+"]")
	list, _, err := c.Milestones.List(ctx, "g/p", &collab.ListMilestonesOptions{State: collab.Ptr(collab.MilestoneActive), IID: collab.Ptr(3)})
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/g%2Fp/milestones", url.Values{"state": {"active"}, "iid": {"3"}})
	assert.Equal(t, []*collab.Milestone{want}, list)
	m.Reply(200, msJSON)
	got, _, err := c.Milestones.Get(ctx, 16, 12)
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/16/milestones/12", nil)
	assert.Equal(t, want, got)
	m.Reply(201, msJSON)
	_, _, err = c.Milestones.Create(ctx, 16, &collab.CreateMilestoneOptions{Title: "10.0", Description: collab.Ptr("Version"), DueDate: collab.Ptr("2013-11-29")})
	require.NoError(t, err)
	m.AssertRequest("POST", "projects/16/milestones", url.Values{"title": {"10.0"}, "description": {"Version"}, "due_date": {"2013-11-29"}})
	m.Reply(200, msJSON)
	_, _, err = c.Milestones.Update(ctx, 16, 12, &collab.UpdateMilestoneOptions{Title: collab.Ptr("11"), Description: collab.Ptr("d"), DueDate: collab.Ptr("2014-01-01"), StateEvent: collab.Ptr(collab.MilestoneClose)})
	require.NoError(t, err)
	m.AssertRequest("PUT", "projects/16/milestones/12", url.Values{"title": {"11"}, "description": {"d"}, "due_date": {"2014-01-01"}, "state_event": {"close"}})
	fixture, err := os.ReadFile("testdata/issues_issue.json")
	require.NoError(t, err)
	m.Reply(200, "["+string(fixture)+"]")
	issues, _, err := c.Milestones.ListIssues(ctx, 16, 12, &collab.ListOptions{PerPage: 10})
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/16/milestones/12/issues", url.Values{"per_page": {"10"}})
	assert.Equal(t, []*collab.Issue{wantIssue()}, issues)
	m.Reply(404, `{"message":"404 Milestone Not Found"}`)
	_, _, err = c.Milestones.Get(ctx, 16, 99)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	before := m.Count()
	_, _, err = c.Milestones.Create(ctx, 16, &collab.CreateMilestoneOptions{})
	assert.Error(t, err)
	assert.Equal(t, before, m.Count())
}

func TestMilestonesAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	project := srv.Seed.Project(srv.Admin, "Planned", collab.PrivateVisibility)
	pid := project.ID
	other := srv.Seed.Project(srv.Admin, "Elsewhere", collab.PrivateVisibility).ID
	ms, _, err := c.Milestones.Create(ctx, pid, &collab.CreateMilestoneOptions{Title: "v1.0", DueDate: collab.Ptr("2030-01-31")})
	require.NoError(t, err)
	assert.Equal(t, 1, ms.IID)
	assert.Equal(t, collab.MilestoneActive, ms.State)
	_, _, err = c.Milestones.Create(ctx, pid, &collab.CreateMilestoneOptions{Title: "v1.0"})
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	_, _, err = c.Milestones.Create(ctx, pid, &collab.CreateMilestoneOptions{Title: "v2", DueDate: collab.Ptr("soon")})
	assert.ErrorIs(t, err, collab.ErrInvalidArgument, "refused before sending")
	otherMS, _, err := c.Milestones.Create(ctx, other, &collab.CreateMilestoneOptions{Title: "v1.0"})
	require.NoError(t, err)

	is, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Ship it", MilestoneID: collab.Ptr(ms.ID)})
	require.NoError(t, err)
	assert.Equal(t, "v1.0", is.Milestone.Title)
	_, _, err = c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "wrong", MilestoneID: collab.Ptr(otherMS.ID)})
	assert.ErrorIs(t, err, collab.ErrNotFound, "a milestone of another project")
	byTitle, _, err := c.Issues.List(ctx, pid, &collab.ListIssuesOptions{Milestone: collab.Ptr("v1.0")})
	require.NoError(t, err)
	assert.Len(t, byTitle, 1)
	moved, _, err := c.Issues.Move(ctx, pid, is.ID, other)
	require.NoError(t, err)
	require.NotNil(t, moved.Milestone, "the milestone is matched by title in the target")
	assert.Equal(t, otherMS.ID, moved.Milestone.ID)

	closed, _, err := c.Milestones.Update(ctx, pid, ms.ID, &collab.UpdateMilestoneOptions{StateEvent: collab.Ptr(collab.MilestoneClose), Description: collab.Ptr("done")})
	require.NoError(t, err)
	assert.Equal(t, collab.MilestoneClosed, closed.State)
	list, _, err := c.Milestones.List(ctx, pid, &collab.ListMilestonesOptions{State: collab.Ptr(collab.MilestoneActive)})
	require.NoError(t, err)
	assert.Empty(t, list)
	reopened, _, err := c.Milestones.Update(ctx, pid, ms.ID, &collab.UpdateMilestoneOptions{StateEvent: collab.Ptr(collab.MilestoneActivate)})
	require.NoError(t, err)
	assert.Equal(t, collab.MilestoneActive, reopened.State)
	_, _, err = c.Milestones.Update(ctx, pid, ms.ID, &collab.UpdateMilestoneOptions{StateEvent: collab.Ptr[collab.MilestoneStateEvent]("melt")})
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	got, _, err := c.Milestones.Get(ctx, pid, ms.ID)
	require.NoError(t, err)
	assert.Equal(t, collab.Ptr("done"), got.Description)
	_, _, err = c.Milestones.Get(ctx, other, ms.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound)

	issues, _, err := c.Milestones.ListIssues(ctx, pid, ms.ID, nil)
	require.NoError(t, err)
	require.Len(t, issues, 1, "the closed original stays in its milestone")
	n := 0
	for _, err := range c.Milestones.AllIssues(ctx, pid, ms.ID, nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 1, n)
	n = 0
	for _, err := range c.Milestones.All(ctx, pid, &collab.ListMilestonesOptions{IID: collab.Ptr(1)}) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 1, n)
}
