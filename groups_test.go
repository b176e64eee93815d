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

const groupJSON = `{"id": 4, "name": "Twitter", "path": "twitter", "description": "Aliquid qui quis dignissimos distinctio ut commodi voluptas est.",
  "visibility_level": 20, "avatar_url": null, "web_url": "https://collab.example.com/groups/twitter", "projects": [%s]}`

func TestGroupsUnit(t *testing.T) {
	ctx := context.Background()
	fixture, err := os.ReadFile("testdata/projects_project.json")
	require.NoError(t, err)
	full := sprintf(groupJSON, string(fixture))
	want := &collab.Group{ID: 4, Name: "Twitter", Path: "twitter", Description: collab.Ptr("Aliquid qui quis dignissimos distinctio ut commodi voluptas est."),
		VisibilityLevel: collab.PublicVisibility, WebURL: "https://collab.example.com/groups/twitter", Projects: []*collab.Project{wantProject()}}

	c, m := newMockClient(t)
	m.Reply(200, full)
	g, _, err := c.Groups.Get(ctx, "my.group")
	require.NoError(t, err)
	m.AssertRequest("GET", "groups/my%2Egroup", nil)
	assert.Equal(t, want, g)

	m.Reply(200, "["+sprintf(groupJSON, "")+"]")
	list, _, err := c.Groups.List(ctx, &collab.ListGroupsOptions{Search: collab.Ptr("twit"), ListOptions: collab.ListOptions{PerPage: 3}})
	require.NoError(t, err)
	m.AssertRequest("GET", "groups", url.Values{"search": {"twit"}, "per_page": {"3"}})
	require.Len(t, list, 1)
	assert.Equal(t, "twitter", list[0].Path)

	m.Reply(201, sprintf(groupJSON, ""))
	_, _, err = c.Groups.Create(ctx, &collab.CreateGroupOptions{Name: "Twitter", Path: "twitter", Description: collab.Ptr("d"), VisibilityLevel: collab.Ptr(collab.InternalVisibility)})
	require.NoError(t, err)
	m.AssertRequest("POST", "groups", url.Values{"name": {"Twitter"}, "path": {"twitter"}, "description": {"d"}, "visibility_level": {"10"}})

	m.Reply(200, full)
	_, _, err = c.Groups.Update(ctx, 4, &collab.UpdateGroupOptions{Name: collab.Ptr("T"), Path: collab.Ptr("t"), Description: collab.Ptr("x"), VisibilityLevel: collab.Ptr(collab.PrivateVisibility)})
	require.NoError(t, err)
	m.AssertRequest("PUT", "groups/4", url.Values{"name": {"T"}, "path": {"t"}, "description": {"x"}, "visibility_level": {"0"}})

	m.Reply(200, ``)
	_, err = c.Groups.Delete(ctx, 4)
	require.NoError(t, err)
	m.AssertRequest("DELETE", "groups/4", nil)

	m.Reply(200, "["+string(fixture)+"]")
	ps, _, err := c.Groups.ListProjects(ctx, "twitter", &collab.ListGroupProjectsOptions{CIEnabledFirst: collab.Ptr(true),
		ListProjectsOptions: collab.ListProjectsOptions{Archived: collab.Ptr(false), Visibility: collab.Ptr("public"), OrderBy: collab.Ptr(collab.ProjectOrderByID), Sort: collab.Ptr(collab.SortAsc), Search: collab.Ptr("s")}})
	require.NoError(t, err)
	m.AssertRequest("GET", "groups/twitter/projects", url.Values{"ci_enabled_first": {"true"}, "archived": {"false"}, "visibility": {"public"},
		"order_by": {"id"}, "sort": {"asc"}, "search": {"s"}})
	assert.Equal(t, []*collab.Project{wantProject()}, ps)

	m.Reply(201, full)
	_, _, err = c.Groups.TransferProject(ctx, 4, 3)
	require.NoError(t, err)
	m.AssertRequest("POST", "groups/4/projects/3", nil)

	for _, status := range []int{403, 404} {
		m.Reply(status, `{"message":"x"}`)
		_, _, err = c.Groups.TransferProject(ctx, 4, 3)
		assert.ErrorIs(t, err, map[int]error{403: collab.ErrForbidden, 404: collab.ErrNotFound}[status])
	}
	before := m.Count()
	_, _, err = c.Groups.Create(ctx, &collab.CreateGroupOptions{Name: "x"})
	assert.Error(t, err)
	_, _, err = c.Groups.Create(ctx, nil)
	assert.Error(t, err)
	assert.Equal(t, before, m.Count())
}

func TestGroupsAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	alice := srv.AddUser("alice", false)
	bob := srv.AddUser("bob", false)
	ac, bc := clientAs(t, srv, alice.Token), clientAs(t, srv, bob.Token)

	g, _, err := ac.Groups.Create(ctx, &collab.CreateGroupOptions{Name: "Docs Team", Path: "docs", Description: collab.Ptr("writers")})
	require.NoError(t, err)
	assert.Equal(t, collab.PrivateVisibility, g.VisibilityLevel)
	_, _, err = ac.Groups.Create(ctx, &collab.CreateGroupOptions{Name: "Again", Path: "docs"})
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	_, _, err = ac.Groups.Create(ctx, &collab.CreateGroupOptions{Name: "Bad", Path: "bad", VisibilityLevel: collab.Ptr(collab.VisibilityLevel(15))})
	var er *collab.ErrorResponse
	require.ErrorAs(t, err, &er)
	assert.Equal(t, []string{"is not included in the list"}, er.Fields["visibility_level"])

	p, _, err := ac.Projects.Create(ctx, &collab.CreateProjectOptions{Name: "Handbook", NamespaceID: collab.Ptr(g.ID)})
	require.NoError(t, err)
	assert.Equal(t, "docs/handbook", p.PathWithNamespace)
	assert.Nil(t, p.Owner, "group projects have no owner")
	assert.Equal(t, "docs", p.Namespace.Path)
	require.NotNil(t, p.Namespace.Avatar, "group namespaces carry an avatar object")

	got, _, err := ac.Groups.Get(ctx, "docs")
	require.NoError(t, err)
	require.Len(t, got.Projects, 1)
	assert.Equal(t, p.ID, got.Projects[0].ID)
	_, _, err = bc.Groups.Get(ctx, g.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound, "private groups are hidden")

	list, _, err := ac.Groups.List(ctx, &collab.ListGroupsOptions{Search: collab.Ptr("doc")})
	require.NoError(t, err)
	require.Len(t, list, 1)
	list, _, err = bc.Groups.List(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, list, "a user lists only own groups")
	list, _, err = c.Groups.List(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, list, 1, "an admin lists all")

	upd, _, err := ac.Groups.Update(ctx, g.ID, &collab.UpdateGroupOptions{Description: collab.Ptr("editors"), VisibilityLevel: collab.Ptr(collab.InternalVisibility)})
	require.NoError(t, err)
	assert.Equal(t, collab.Ptr("editors"), upd.Description)
	assert.Len(t, upd.Projects, 1, "update answers with the projects")
	_, _, err = bc.Groups.Update(ctx, g.ID, &collab.UpdateGroupOptions{Name: collab.Ptr("mine")})
	assert.ErrorIs(t, err, collab.ErrForbidden, "internal now, visible, but not bob's")

	own := srv.Seed.Project(bob, "Tool", collab.InternalVisibility).ID
	_, _, err = bc.Groups.TransferProject(ctx, g.ID, own)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	moved, _, err := c.Groups.TransferProject(ctx, g.ID, own)
	require.NoError(t, err)
	assert.Len(t, moved.Projects, 2)

	ps, _, err := ac.Groups.ListProjects(ctx, g.ID, &collab.ListGroupProjectsOptions{ListProjectsOptions: collab.ListProjectsOptions{OrderBy: collab.Ptr(collab.ProjectOrderByName), Sort: collab.Ptr(collab.SortAsc)}})
	require.NoError(t, err)
	assert.Equal(t, []string{"Handbook", "Tool"}, names(ps))
	n := 0
	for _, err := range ac.Groups.AllProjects(ctx, "docs", nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 2, n)
	n = 0
	for _, err := range c.Groups.All(ctx, nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 1, n)

	_, err = bc.Groups.Delete(ctx, g.ID)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	_, err = ac.Groups.Delete(ctx, g.ID)
	require.NoError(t, err)
	_, _, err = c.Projects.Get(ctx, p.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound, "deleting a group deletes its projects")
	_, _, err = c.Projects.Get(ctx, own)
	assert.ErrorIs(t, err, collab.ErrNotFound)
}
