package collab_test

import (
	"context"
	"iter"
	"net/url"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/internal/mocktest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// collect gathers what seq yields, stopping at the first error.
func collect[T any](seq iter.Seq2[*T, error]) ([]*T, error) {
	var out []*T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// TestWholeListsHaveAll: the lists this server sends whole (branches,
// labels, a group's members) have All siblings too. Each makes the one
// request List makes, on the escaped path, and yields what List returns; a
// server that pages such a list is followed.
func TestWholeListsHaveAll(t *testing.T) {
	ctx := context.Background()
	m := mocktest.New(t)
	c, err := collab.NewClient("https://collab.example.com", collab.WithPrivateToken("tok"), collab.WithHTTPClient(m.Client()), collab.WithoutRetries())
	require.NoError(t, err)
	firstPage := url.Values{"page": {"1"}, "per_page": {"100"}}

	m.Reply(200, `[{"name": "master", "protected": true}, null, {"name": "feature/x"}]`)
	branches, err := collect(c.Branches.All(ctx, "g/my.site", nil))
	require.NoError(t, err)
	m.AssertCall("GET", "/api/v3/projects/g%2Fmy%2Esite/repository/branches", firstPage)
	assert.Equal(t, []*collab.Branch{{Name: "master", Protected: true}, {Name: "feature/x"}}, branches)

	m.Reply(200, `[{"name": "bug", "color": "#d9534f"}]`)
	labels, err := collect(c.Labels.All(ctx, 3, &collab.ListLabelsOptions{}))
	require.NoError(t, err)
	m.AssertCall("GET", "/api/v3/projects/3/labels", firstPage)
	assert.Equal(t, []*collab.Label{{Name: "bug", Color: "#d9534f"}}, labels)

	m.Reply(200, `[{"id": 1, "username": "root", "access_level": 50}]`, "X-Page", "1", "X-Next-Page", "2", "X-Total-Pages", "2")
	m.Reply(200, `[{"id": 2, "username": "bob", "access_level": 30}]`, "X-Page", "2")
	members, err := collect(c.GroupMembers.All(ctx, "my-group", nil))
	require.NoError(t, err)
	m.AssertCall("GET", "/api/v3/groups/my-group/members", url.Values{"page": {"2"}, "per_page": {"100"}})
	assert.Equal(t, []*collab.Member{
		{User: collab.User{ID: 1, Username: "root"}, AccessLevel: collab.OwnerAccess},
		{User: collab.User{ID: 2, Username: "bob"}, AccessLevel: collab.DeveloperAccess},
	}, members)
	assert.Equal(t, 4, m.Count(), "one request a page")

	m.Reply(404, `{"message": "404 Project Not Found"}`)
	_, err = collect(c.Labels.All(ctx, 3, nil))
	assert.ErrorIs(t, err, collab.ErrNotFound)
	before := m.Count()
	_, err = collect(c.Branches.All(ctx, "", nil))
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	_, err = collect(c.GroupMembers.All(ctx, 1.5, nil))
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	assert.Equal(t, before, m.Count(), "a bad id sends nothing")
}

// TestWholeListsAllAgainstFake walks the whole lists of the fake server,
// which, like the deployed servers, sends them in one answer.
func TestWholeListsAllAgainstFake(t *testing.T) {
	ctx := context.Background()
	srv := collabtest.NewTestServer(t)
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.AdminToken), collab.WithoutRetries())
	require.NoError(t, err)
	p, _, err := c.Projects.Create(ctx, &collab.CreateProjectOptions{Name: "Whole"})
	require.NoError(t, err)
	for _, name := range []string{"bug", "feature"} {
		_, _, err := c.Labels.Create(ctx, p.ID, &collab.CreateLabelOptions{Name: name, Color: "#428bca"})
		require.NoError(t, err)
	}
	g, _, err := c.Groups.Create(ctx, &collab.CreateGroupOptions{Name: "Crew", Path: "crew"})
	require.NoError(t, err)
	bob := srv.AddUser("bob", false)
	_, _, err = c.GroupMembers.Add(ctx, g.ID, &collab.AddMemberOptions{UserID: bob.ID, AccessLevel: collab.DeveloperAccess})
	require.NoError(t, err)

	branches, err := collect(c.Branches.All(ctx, p.ID, nil))
	require.NoError(t, err)
	listed, _, err := c.Branches.List(ctx, p.ID, nil)
	require.NoError(t, err)
	assert.Equal(t, listed, branches)
	require.Len(t, branches, 1)
	assert.Equal(t, "master", branches[0].Name)

	labels, err := collect(c.Labels.All(ctx, p.ID, nil))
	require.NoError(t, err)
	var names []string
	for _, l := range labels {
		names = append(names, l.Name)
	}
	assert.ElementsMatch(t, []string{"bug", "feature"}, names)

	members, err := collect(c.GroupMembers.All(ctx, g.ID, nil))
	require.NoError(t, err)
	var ids []int
	for _, m := range members {
		ids = append(ids, m.ID)
	}
	assert.Contains(t, ids, bob.ID)

	_, err = collect(c.Labels.All(ctx, 999999, nil))
	assert.ErrorIs(t, err, collab.ErrNotFound)
}
