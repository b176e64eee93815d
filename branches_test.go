package collab_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
)

func TestBranchesUnit(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	branchJSON := `{"name": "feature/x.y", "protected": true, "commit": {"id": "7b5c3cc8be40ee161ae89a06bba6229da1032a0c",
	  "parents": [{"id": "4ad91d3c1144c406e50c7b33bae684bd6837faf8"}], "tree": "46e82de44b1061621357f24c05515327f2795a95",
	  "message": "add projects API", "author": {"name": "John Smith", "email": "john@example.com"},
	  "committer": {"name": "Jack Smith", "email": "jack@example.com"},
	  "authored_date": "2012-06-27T05:51:39-07:00", "committed_date": "2012-06-28T03:44:20-07:00"}}`
	want := &collab.Branch{Name: "feature/x.y", Protected: true, Commit: &collab.BranchCommit{ID: "7b5c3cc8be40ee161ae89a06bba6229da1032a0c",
		Parents: []*collab.CommitParent{{ID: "4ad91d3c1144c406e50c7b33bae684bd6837faf8"}}, Tree: "46e82de44b1061621357f24c05515327f2795a95",
		Message: "add projects API", Author: &collab.EventPerson{Name: "John Smith", Email: "john@example.com"},
		Committer:    &collab.EventPerson{Name: "Jack Smith", Email: "jack@example.com"},
		AuthoredDate: ts("2012-06-27T05:51:39-07:00"), CommittedDate: ts("2012-06-28T03:44:20-07:00")}}

	m.Reply(200, "["+branchJSON+"]")
	list, _, err := c.Branches.List(ctx, "g/p", nil)
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/g%2Fp/repository/branches", nil)
	assert.Equal(t, []*collab.Branch{want}, list)
	for _, tc := range []struct {
		run    func() (*collab.Branch, *collab.Response, error)
		method string
		path   string
	}{
		{func() (*collab.Branch, *collab.Response, error) { return c.Branches.Get(ctx, 3, "feature/x.y") }, "GET", "projects/3/repository/branches/feature%2Fx%2Ey"},
		{func() (*collab.Branch, *collab.Response, error) { return c.Branches.Protect(ctx, 3, "feature/x.y") }, "PUT", "projects/3/repository/branches/feature%2Fx%2Ey/protect"},
		{func() (*collab.Branch, *collab.Response, error) { return c.Branches.Unprotect(ctx, 3, "feature/x.y") }, "PUT", "projects/3/repository/branches/feature%2Fx%2Ey/unprotect"},
	} {
		m.Reply(200, branchJSON)
		got, _, err := tc.run()
		require.NoError(t, err)
		m.AssertRequest(tc.method, tc.path, nil)
		assert.Equal(t, want, got)
		m.Reply(404, `{"message":"404 Branch Not Found"}`)
		_, _, err = tc.run()
		assert.ErrorIs(t, err, collab.ErrNotFound)
	}
	_, _, err = c.Branches.Get(ctx, 3, "")
	assert.Error(t, err, "an empty branch name never reaches the server")
}

func TestBranchesAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	project := srv.Seed.Project(srv.Admin, "Repo", collab.PrivateVisibility)
	pid := project.ID
	sha := srv.Seed.Branch(project, "feature/x.y").Commit.ID
	srv.Seed.Branch(project, "feature/x.y")

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
	assert.ErrorIs(t, err, collab.ErrNotFound)
	assert.ErrorContains(t, err, "Branch Not Found")

	_, _, err = c.Settings.Update(ctx, &collab.UpdateSettingsOptions{DefaultBranchProtection: collab.Ptr(0)})
	require.NoError(t, err)
	other := srv.Seed.Project(srv.Admin, "Other", collab.PrivateVisibility).ID
	m2, _, err := c.Branches.Get(ctx, other, "master")
	require.NoError(t, err)
	assert.False(t, m2.Protected, "protection follows the settings")
}

func TestBranchesCreateDeleteUnit(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	m.Reply(201, `{"name": "fix/typo", "protected": false, "developers_can_push": true, "developers_can_merge": true,
	  "commit": {"id": "7b5c3cc8be40ee161ae89a06bba6229da1032a0c", "parent_ids": ["4ad91d3c1144c406e50c7b33bae684bd6837faf8"],
	  "tree": "46e82de4", "message": "fix a typo", "author_name": "John Smith", "author_email": "john@example.com",
	  "committer_name": "Jack Smith", "committer_email": "jack@example.com",
	  "authored_date": "2012-06-27T05:51:39-07:00", "committed_date": "2012-06-28T03:44:20-07:00"}}`)
	got, _, err := c.Branches.Create(ctx, "g/p.q", &collab.CreateBranchOptions{Branch: "fix/typo", Ref: "master"})
	require.NoError(t, err)
	rec := m.AssertRequest("POST", "projects/g%2Fp%2Eq/repository/branches", url.Values{"branch_name": {"fix/typo"}, "ref": {"master"}})
	assert.Equal(t, "application/x-www-form-urlencoded", rec.Header.Get("Content-Type"))
	assert.Equal(t, &collab.Branch{Name: "fix/typo", DevelopersCanPush: true, DevelopersCanMerge: true, Commit: &collab.BranchCommit{
		ID: "7b5c3cc8be40ee161ae89a06bba6229da1032a0c", ParentIDs: []string{"4ad91d3c1144c406e50c7b33bae684bd6837faf8"},
		Tree: "46e82de4", Message: "fix a typo", AuthorName: "John Smith", AuthorEmail: "john@example.com",
		CommitterName: "Jack Smith", CommitterEmail: "jack@example.com",
		AuthoredDate: ts("2012-06-27T05:51:39-07:00"), CommittedDate: ts("2012-06-28T03:44:20-07:00")}}, got)

	for _, msg := range []string{"Branch name is invalid", "Branch already exists", "Invalid reference name", "Branch creation was rejected by Git hook"} {
		m.Reply(400, `{"message":"`+msg+`"}`)
		_, _, err := c.Branches.Create(ctx, 3, &collab.CreateBranchOptions{Branch: "x", Ref: "master"})
		assert.ErrorIs(t, err, collab.ErrBadRequest)
		assert.ErrorContains(t, err, msg)
	}
	calls := m.Count()
	for _, opt := range []*collab.CreateBranchOptions{nil, {Ref: "master"}, {Branch: "x"}} {
		_, _, err := c.Branches.Create(ctx, 3, opt)
		assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	}
	assert.Equal(t, calls, m.Count(), "a missing parameter never reaches the server")

	m.Reply(200, `{"branch_name": "fix/typo"}`)
	_, err = c.Branches.Delete(ctx, 3, "fix/typo")
	require.NoError(t, err)
	m.AssertRequest("DELETE", "projects/3/repository/branches/fix%2Ftypo", nil)
	for _, tc := range []struct {
		status int
		msg    string
		want   error
	}{
		{404, "No such branch", collab.ErrNotFound},
		{405, "Cannot remove HEAD branch", collab.ErrMethodNotAllowed},
		{405, "Protected branch cant be removed", collab.ErrMethodNotAllowed},
		{405, "You dont have push access to repo", collab.ErrMethodNotAllowed},
		{400, "Failed to remove branch", collab.ErrBadRequest},
	} {
		m.Reply(tc.status, `{"message":"`+tc.msg+`"}`)
		_, err := c.Branches.Delete(ctx, 3, "fix/typo")
		assert.ErrorIs(t, err, tc.want)
		assert.ErrorContains(t, err, tc.msg)
	}
	calls = m.Count()
	_, err = c.Branches.Delete(ctx, 3, "")
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	assert.Equal(t, calls, m.Count())
}

func TestBranchesCreateDeleteAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	project := srv.Seed.Project(srv.Admin, "Repo", collab.PrivateVisibility)
	pid := project.ID
	master, _, err := c.Branches.Get(ctx, pid, "master")
	require.NoError(t, err)

	b, _, err := c.Branches.Create(ctx, pid, &collab.CreateBranchOptions{Branch: "fix/typo", Ref: "master"})
	require.NoError(t, err)
	assert.Equal(t, "fix/typo", b.Name)
	assert.False(t, b.Protected)
	assert.Equal(t, master.Commit.ID, b.Commit.ID, "the branch starts at its ref")
	got, _, err := c.Branches.Get(ctx, pid, "fix/typo")
	require.NoError(t, err)
	assert.Equal(t, b, got)
	byCommit, _, err := c.Branches.Create(ctx, pid, &collab.CreateBranchOptions{Branch: "from-sha", Ref: master.Commit.ID[:8]})
	require.NoError(t, err)
	assert.Equal(t, master.Commit.ID, byCommit.Commit.ID, "a commit id's prefix is a ref")

	for _, tc := range []struct{ name, ref, msg string }{
		{"a..b", "master", "Branch name is invalid"},
		{"has space", "master", "Branch name is invalid"},
		{"x.lock", "master", "Branch name is invalid"},
		{"refs/heads/x", "master", "Branch name is invalid"},
		{"fix/typo", "master", "Branch already exists"},
		{"other", "no-such-ref", "Invalid reference name"},
	} {
		_, _, err := c.Branches.Create(ctx, pid, &collab.CreateBranchOptions{Branch: tc.name, Ref: tc.ref})
		assert.ErrorIs(t, err, collab.ErrBadRequest, tc.name)
		assert.ErrorContains(t, err, tc.msg, tc.name)
	}

	reporter, developer := srv.Seed.User("rita"), srv.Seed.User("dev")
	srv.Seed.Member(project, reporter, collab.ReporterAccess)
	srv.Seed.Member(project, developer, collab.DeveloperAccess)
	_, _, err = clientAs(t, srv, reporter.Token).Branches.Create(ctx, pid, &collab.CreateBranchOptions{Branch: "r", Ref: "master"})
	assert.ErrorIs(t, err, collab.ErrForbidden, "creating a branch needs push access")
	_, _, err = clientAs(t, srv, developer.Token).Branches.Create(ctx, pid, &collab.CreateBranchOptions{Branch: "d", Ref: "master"})
	require.NoError(t, err)

	_, _, err = c.Branches.Protect(ctx, pid, "from-sha")
	require.NoError(t, err)
	for _, tc := range []struct {
		client *collab.Client
		branch string
		want   error
		msg    string
	}{
		{c, "nope", collab.ErrNotFound, "No such branch"},
		{c, "master", collab.ErrMethodNotAllowed, "Cannot remove HEAD branch"},
		{c, "from-sha", collab.ErrMethodNotAllowed, "Protected branch cant be removed"},
		{clientAs(t, srv, reporter.Token), "d", collab.ErrMethodNotAllowed, "You dont have push access to repo"},
	} {
		_, err := tc.client.Branches.Delete(ctx, pid, tc.branch)
		assert.ErrorIs(t, err, tc.want, tc.branch)
		assert.ErrorContains(t, err, tc.msg, tc.branch)
	}
	_, err = c.Branches.Delete(ctx, pid, "fix/typo")
	require.NoError(t, err)
	_, _, err = c.Branches.Get(ctx, pid, "fix/typo")
	assert.ErrorIs(t, err, collab.ErrNotFound, "a deleted branch is gone")

	events, _, err := c.Projects.ListEvents(ctx, pid, nil)
	require.NoError(t, err)
	require.NotEmpty(t, events)
	assert.Equal(t, "deleted", events[0].ActionName, "a removal is a push event")
	require.NotNil(t, events[0].Data)
	assert.Equal(t, "refs/heads/fix/typo", events[0].Data.Ref)
	assert.Equal(t, "pushed new", events[1].ActionName)

	srv.Seed.RefuseRefChanges(project, true)
	_, _, err = c.Branches.Create(ctx, pid, &collab.CreateBranchOptions{Branch: "hooked", Ref: "master"})
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	assert.ErrorContains(t, err, "Branch creation was rejected by Git hook")
	_, err = c.Branches.Delete(ctx, pid, "d")
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	assert.ErrorContains(t, err, "Failed to remove branch")
	srv.Seed.RefuseRefChanges(project, false)
	_, err = c.Branches.Delete(ctx, pid, "d")
	require.NoError(t, err)
}
