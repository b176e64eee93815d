package collab_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
)

func TestLabelsUnit(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	m.Reply(200, `[{"name": "bug", "color": "#d9534f", "description": "Bug reported by user", "open_issues_count": 1,
	  "closed_issues_count": 2, "open_merge_requests_count": 3, "subscribed": false}]`)
	list, _, err := c.Labels.List(ctx, "g/p", nil)
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/g%2Fp/labels", nil)
	assert.Equal(t, []*collab.Label{{Name: "bug", Color: "#d9534f", Description: collab.Ptr("Bug reported by user"), OpenIssuesCount: 1,
		ClosedIssuesCount: 2, OpenMergeRequestsCount: 3}}, list)

	m.Reply(201, `{"name": "feature", "color": "#5843AD", "description": null}`)
	l, _, err := c.Labels.Create(ctx, 5, &collab.CreateLabelOptions{Name: "feature", Color: "#5843AD", Description: collab.Ptr("new")})
	require.NoError(t, err)
	m.AssertRequest("POST", "projects/5/labels", url.Values{"name": {"feature"}, "color": {"#5843AD"}, "description": {"new"}})
	assert.Equal(t, &collab.Label{Name: "feature", Color: "#5843AD"}, l)

	m.Reply(200, `{"name": "docs", "color": "#8E44AD", "description": "Documentation"}`)
	_, _, err = c.Labels.Update(ctx, 5, "feature", &collab.UpdateLabelOptions{NewName: collab.Ptr("docs"), Color: collab.Ptr("#8E44AD"), Description: collab.Ptr("Documentation")})
	require.NoError(t, err)
	m.AssertRequest("PUT", "projects/5/labels", url.Values{"name": {"feature"}, "new_name": {"docs"}, "color": {"#8E44AD"}, "description": {"Documentation"}})

	m.Reply(200, `{"id": 1, "title": "docs", "color": "#8E44AD", "description": "Documentation", "updated_at": "2016-07-08T08:16:06.171Z",
	  "template": false, "project_id": 5, "created_at": "2016-07-08T08:16:06.171Z"}`)
	d, _, err := c.Labels.Delete(ctx, 5, "docs")
	require.NoError(t, err)
	m.AssertRequest("DELETE", "projects/5/labels", url.Values{"name": {"docs"}})
	assert.Equal(t, &collab.DeletedLabel{ID: 1, Title: "docs", Color: "#8E44AD", Description: collab.Ptr("Documentation"), ProjectID: 5,
		CreatedAt: ts("2016-07-08T08:16:06.171Z"), UpdatedAt: ts("2016-07-08T08:16:06.171Z")}, d)

	sub := `{"name": "bug", "color": "#d9534f", "description": null, "open_issues_count": 1, "closed_issues_count": 0, "open_merge_requests_count": 0, "subscribed": true}`
	for label, esc := range map[string]string{"bug": "bug", "my.label": "my%2Elabel", "a/b c": "a%2Fb%20c"} {
		m.Reply(201, sub)
		got, _, err := c.Labels.Subscribe(ctx, 5, label)
		require.NoError(t, err)
		assert.True(t, got.Subscribed)
		m.AssertRequest("POST", "projects/5/labels/"+esc+"/subscription", nil)
		m.Reply(200, sub)
		_, _, err = c.Labels.Unsubscribe(ctx, 5, label)
		require.NoError(t, err)
		m.AssertRequest("DELETE", "projects/5/labels/"+esc+"/subscription", nil)
	}
	for status, sentinel := range map[int]error{304: collab.ErrNotModified, 404: collab.ErrNotFound} {
		m.Reply(status, `{"message":"x"}`)
		_, _, err = c.Labels.Subscribe(ctx, 5, "bug")
		assert.ErrorIs(t, err, sentinel)
	}
	m.Reply(409, `{"message":"Label already exists"}`)
	_, _, err = c.Labels.Create(ctx, 5, &collab.CreateLabelOptions{Name: "bug", Color: "#000000"})
	assert.ErrorIs(t, err, collab.ErrConflict)

	before := m.Count()
	for _, bad := range []*collab.CreateLabelOptions{nil, {Color: "#000000"}, {Name: "x", Color: "red"}, {Name: "x", Color: "#12345"}, {Name: "x", Color: "#GGGGGG"}} {
		_, _, err = c.Labels.Create(ctx, 5, bad)
		assert.Error(t, err)
	}
	for _, bad := range []struct {
		name string
		opt  *collab.UpdateLabelOptions
	}{{"", &collab.UpdateLabelOptions{NewName: collab.Ptr("x")}}, {"x", nil}, {"x", &collab.UpdateLabelOptions{}}, {"x", &collab.UpdateLabelOptions{Color: collab.Ptr("blue")}}} {
		_, _, err = c.Labels.Update(ctx, 5, bad.name, bad.opt)
		assert.Error(t, err)
	}
	_, _, err = c.Labels.Delete(ctx, 5, "")
	assert.Error(t, err)
	_, _, err = c.Labels.Subscribe(ctx, 5, "")
	assert.Error(t, err)
	_, _, err = c.Labels.Unsubscribe(ctx, 5, "")
	assert.Error(t, err)
	assert.Equal(t, before, m.Count(), "client-side validation sends nothing")
}

func TestLabelsAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	project := srv.Seed.Project(srv.Admin, "Labelled", collab.PrivateVisibility)
	pid := project.ID
	l, _, err := c.Labels.Create(ctx, pid, &collab.CreateLabelOptions{Name: "bug", Color: "#d9534f", Description: collab.Ptr("Bugs")})
	require.NoError(t, err)
	assert.Equal(t, collab.Ptr("Bugs"), l.Description)
	_, _, err = c.Labels.Create(ctx, pid, &collab.CreateLabelOptions{Name: "bug", Color: "#d9534f"})
	assert.ErrorIs(t, err, collab.ErrConflict)

	open, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "a", Labels: collab.LabelNames{"bug"}})
	require.NoError(t, err)
	closed, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "b", Labels: collab.LabelNames{"bug"}})
	require.NoError(t, err)
	_, _, err = c.Issues.Update(ctx, pid, closed.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)})
	require.NoError(t, err)
	srv.Seed.Branch(project, "feature")
	mr := srv.Seed.MergeRequest(project, srv.Admin, "feature", "master", "Fix").ID
	_ = mr
	list, _, err := c.Labels.List(ctx, pid, nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, 1, list[0].OpenIssuesCount)
	assert.Equal(t, 1, list[0].ClosedIssuesCount)

	upd, _, err := c.Labels.Update(ctx, pid, "bug", &collab.UpdateLabelOptions{NewName: collab.Ptr("defect"), Color: collab.Ptr("#000000")})
	require.NoError(t, err)
	assert.Equal(t, "defect", upd.Name)
	got, _, err := c.Issues.Get(ctx, pid, open.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{"defect"}, got.Labels, "a rename follows onto issues")
	_, _, err = c.Labels.Update(ctx, pid, "nope", &collab.UpdateLabelOptions{Color: collab.Ptr("#000000")})
	assert.ErrorIs(t, err, collab.ErrNotFound)

	sub, _, err := c.Labels.Subscribe(ctx, pid, "defect")
	require.NoError(t, err)
	assert.True(t, sub.Subscribed)
	_, _, err = c.Labels.Subscribe(ctx, pid, "defect")
	assert.ErrorIs(t, err, collab.ErrNotModified)
	_, _, err = c.Labels.Unsubscribe(ctx, pid, "defect")
	require.NoError(t, err)
	_, _, err = c.Labels.Unsubscribe(ctx, pid, "defect")
	assert.ErrorIs(t, err, collab.ErrNotModified)
	_, _, err = c.Labels.Subscribe(ctx, pid, "missing")
	assert.ErrorIs(t, err, collab.ErrNotFound)

	d, _, err := c.Labels.Delete(ctx, pid, "defect")
	require.NoError(t, err)
	assert.Equal(t, "defect", d.Title)
	assert.Equal(t, pid, d.ProjectID)
	_, _, err = c.Labels.Delete(ctx, pid, "defect")
	assert.ErrorIs(t, err, collab.ErrNotFound)
}
