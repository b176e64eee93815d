package collab

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBranchesUnit(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	branchJSON := `{"name": "feature/x.y", "protected": true, "commit": {"id": "7b5c3cc8be40ee161ae89a06bba6229da1032a0c",
	  "parents": [{"id": "4ad91d3c1144c406e50c7b33bae684bd6837faf8"}], "tree": "46e82de44b1061621357f24c05515327f2795a95",
	  "message": "add projects API", "author": {"name": "John Smith", "email": "john@example.com"},
	  "committer": {"name": "Jack Smith", "email": "jack@example.com"},
	  "authored_date": "2012-06-27T05:51:39-07:00", "committed_date": "2012-06-28T03:44:20-07:00"}}`
	want := &Branch{Name: "feature/x.y", Protected: true, Commit: &BranchCommit{ID: "7b5c3cc8be40ee161ae89a06bba6229da1032a0c",
		Parents: []*CommitParent{{ID: "4ad91d3c1144c406e50c7b33bae684bd6837faf8"}}, Tree: "46e82de44b1061621357f24c05515327f2795a95",
		Message: "add projects API", Author: &EventPerson{Name: "John Smith", Email: "john@example.com"},
		Committer:    &EventPerson{Name: "Jack Smith", Email: "jack@example.com"},
		AuthoredDate: ts("2012-06-27T05:51:39-07:00"), CommittedDate: ts("2012-06-28T03:44:20-07:00")}}

	m.Reply(200, "["+branchJSON+"]")
	list, _, err := c.Branches.List(ctx, "g/p", nil)
	require.NoError(t, err)
	m.assertCall("GET", "projects/g%2Fp/repository/branches", nil)
	assert.Equal(t, []*Branch{want}, list)
	for _, tc := range []struct {
		run    func() (*Branch, *Response, error)
		method string
		path   string
	}{
		{func() (*Branch, *Response, error) { return c.Branches.Get(ctx, 3, "feature/x.y") }, "GET", "projects/3/repository/branches/feature%2Fx%2Ey"},
		{func() (*Branch, *Response, error) { return c.Branches.Protect(ctx, 3, "feature/x.y") }, "PUT", "projects/3/repository/branches/feature%2Fx%2Ey/protect"},
		{func() (*Branch, *Response, error) { return c.Branches.Unprotect(ctx, 3, "feature/x.y") }, "PUT", "projects/3/repository/branches/feature%2Fx%2Ey/unprotect"},
	} {
		m.Reply(200, branchJSON)
		got, _, err := tc.run()
		require.NoError(t, err)
		m.assertCall(tc.method, tc.path, nil)
		assert.Equal(t, want, got)
		m.Reply(404, `{"message":"404 Branch Not Found"}`)
		_, _, err = tc.run()
		assert.ErrorIs(t, err, ErrNotFound)
	}
	_, _, err = c.Branches.Get(ctx, 3, "")
	assert.Error(t, err, "an empty branch name never reaches the server")
}

func TestBranchesAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	pid := srv.AddProject(srv.AdminID, "Repo", 0)
	sha := srv.AddBranch(pid, "feature/x.y", "")
	srv.AddBranch(pid, "feature/x.y", "")

	b, _, err := c.Branches.Get(ctx, pid, "feature/x.y")
	require.NoError(t, err)
	assert.False(t, b.Protected)
	require.Len(t, b.Commit.Parents, 1)
	assert.Equal(t, sha, b.Commit.Parents[0].ID)
	master, _, err := c.Branches.Get(ctx, pid, "master")
	require.NoError(t, err)
	assert.True(t, master.Protected, "the default branch is protected by default_branch_protection")

	for i := 0; i < 2; i++ {
		p, _, err := c.Branches.Protect(ctx, pid, "feature/x.y")
		require.NoError(t, err)
		assert.True(t, p.Protected, "protect is idempotent")
	}
	for i := 0; i < 2; i++ {
		u, _, err := c.Branches.Unprotect(ctx, pid, "master")
		require.NoError(t, err)
		assert.False(t, u.Protected)
	}
	list, _, err := c.Branches.List(ctx, pid, nil)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "feature/x.y", list[0].Name)
	assert.True(t, list[0].Protected)
	_, _, err = c.Branches.Protect(ctx, pid, "nope")
	assert.ErrorIs(t, err, ErrNotFound)
	assert.ErrorContains(t, err, "Branch Not Found")

	_, _, err = c.Settings.Update(ctx, &UpdateSettingsOptions{DefaultBranchProtection: Ptr(0)})
	require.NoError(t, err)
	other := srv.AddProject(srv.AdminID, "Other", 0)
	m2, _, err := c.Branches.Get(ctx, other, "master")
	require.NoError(t, err)
	assert.False(t, m2.Protected, "protection follows the settings")
}
