package collab_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
)

const memberJSON = `{"id": 1, "username": "raymond_smith", "email": "ray@smith.org", "name": "Raymond Smith", "state": "active",
  "created_at": "2012-10-22T14:13:35Z", "access_level": 30}`

func TestMembersUnit(t *testing.T) {
	ctx := context.Background()
	want := &collab.Member{User: collab.User{ID: 1, Username: "raymond_smith", Email: "ray@smith.org", Name: "Raymond Smith", State: collab.UserActive,
		CreatedAt: ts("2012-10-22T14:13:35Z")}, AccessLevel: collab.DeveloperAccess}
	c, m := newMockClient(t)

	m.Reply(200, "["+memberJSON+"]")
	list, _, err := c.ProjectMembers.List(ctx, "g/p.x", &collab.ListProjectMembersOptions{Query: collab.Ptr("ray"), ListOptions: collab.ListOptions{Page: 2}})
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/g%2Fp%2Ex/members", url.Values{"query": {"ray"}, "page": {"2"}})
	assert.Equal(t, []*collab.Member{want}, list)

	m.Reply(200, memberJSON)
	got, _, err := c.ProjectMembers.Get(ctx, 5, 1)
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/5/members/1", nil)
	assert.Equal(t, want, got)

	m.Reply(201, memberJSON)
	_, _, err = c.ProjectMembers.Add(ctx, 5, &collab.AddMemberOptions{UserID: 1, AccessLevel: collab.DeveloperAccess})
	require.NoError(t, err)
	m.AssertRequest("POST", "projects/5/members", url.Values{"user_id": {"1"}, "access_level": {"30"}})

	m.Reply(200, memberJSON)
	_, _, err = c.ProjectMembers.Update(ctx, 5, 1, &collab.UpdateMemberOptions{AccessLevel: collab.MasterAccess})
	require.NoError(t, err)
	m.AssertRequest("PUT", "projects/5/members/1", url.Values{"access_level": {"40"}})

	m.Reply(200, `{"message": "Access revoked", "id": 1}`)
	_, err = c.ProjectMembers.Remove(ctx, 5, 1)
	require.NoError(t, err, "the unreliable body is not decoded")
	m.AssertRequest("DELETE", "projects/5/members/1", nil)

	groupMember := `{"id": 1, "username": "raymond_smith", "name": "Raymond Smith", "state": "active", "created_at": "2012-10-22T14:13:35Z", "access_level": 50}`
	m.Reply(200, "["+groupMember+"]")
	glist, _, err := c.GroupMembers.List(ctx, "my.group", nil)
	require.NoError(t, err)
	m.AssertRequest("GET", "groups/my%2Egroup/members", nil)
	assert.Equal(t, []*collab.Member{{User: collab.User{ID: 1, Username: "raymond_smith", Name: "Raymond Smith", State: collab.UserActive, CreatedAt: ts("2012-10-22T14:13:35Z")}, AccessLevel: collab.OwnerAccess}}, glist)

	m.Reply(201, groupMember)
	_, _, err = c.GroupMembers.Add(ctx, 3, &collab.AddMemberOptions{UserID: 1, AccessLevel: collab.OwnerAccess})
	require.NoError(t, err)
	m.AssertRequest("POST", "groups/3/members", url.Values{"user_id": {"1"}, "access_level": {"50"}})
	m.Reply(200, groupMember)
	_, _, err = c.GroupMembers.Update(ctx, 3, 1, &collab.UpdateMemberOptions{AccessLevel: collab.GuestAccess})
	require.NoError(t, err)
	m.AssertRequest("PUT", "groups/3/members/1", url.Values{"access_level": {"10"}})
	m.Reply(200, groupMember)
	_, err = c.GroupMembers.Remove(ctx, 3, 1)
	require.NoError(t, err)
	m.AssertRequest("DELETE", "groups/3/members/1", nil)

	for status, sentinel := range map[int]error{403: collab.ErrForbidden, 404: collab.ErrNotFound, 409: collab.ErrConflict, 422: collab.ErrUnprocessable} {
		m.Reply(status, `{"message":"x"}`)
		_, _, err = c.GroupMembers.Add(ctx, 3, &collab.AddMemberOptions{UserID: 1, AccessLevel: collab.OwnerAccess})
		assert.ErrorIs(t, err, sentinel)
	}
}

func TestMembersAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	alice := srv.AddUser("alice", false)
	bob := srv.AddUser("bob", false)
	ac, bc := clientAs(t, srv, alice.Token), clientAs(t, srv, bob.Token)
	pid := srv.Seed.Project(alice, "Team", collab.PrivateVisibility).ID

	m, _, err := ac.ProjectMembers.Add(ctx, pid, &collab.AddMemberOptions{UserID: bob.ID, AccessLevel: collab.DeveloperAccess})
	require.NoError(t, err)
	assert.Equal(t, "bob", m.Username)
	assert.Equal(t, "bob@example.com", m.Email)
	again, _, err := ac.ProjectMembers.Add(ctx, pid, &collab.AddMemberOptions{UserID: bob.ID, AccessLevel: collab.MasterAccess})
	require.NoError(t, err)
	assert.Equal(t, collab.DeveloperAccess, again.AccessLevel, "adding an existing member changes nothing")
	_, _, err = ac.ProjectMembers.Add(ctx, pid, &collab.AddMemberOptions{UserID: bob.ID + 1000, AccessLevel: collab.DeveloperAccess})
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, _, err = ac.ProjectMembers.Add(ctx, pid, &collab.AddMemberOptions{UserID: bob.ID, AccessLevel: 35})
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	_, _, err = bc.ProjectMembers.Add(ctx, pid, &collab.AddMemberOptions{UserID: bob.ID, AccessLevel: collab.MasterAccess})
	assert.ErrorIs(t, err, collab.ErrForbidden, "developers cannot manage members")

	list, _, err := bc.ProjectMembers.List(ctx, pid, &collab.ListProjectMembersOptions{Query: collab.Ptr("bo")})
	require.NoError(t, err)
	require.Len(t, list, 1)
	n := 0
	for _, err := range ac.ProjectMembers.All(ctx, pid, nil) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, 2, n)
	upd, _, err := ac.ProjectMembers.Update(ctx, pid, bob.ID, &collab.UpdateMemberOptions{AccessLevel: collab.ReporterAccess})
	require.NoError(t, err)
	assert.Equal(t, collab.ReporterAccess, upd.AccessLevel)
	got, _, err := c.ProjectMembers.Get(ctx, pid, bob.ID)
	require.NoError(t, err)
	assert.Equal(t, collab.ReporterAccess, got.AccessLevel)

	_, err = bc.ProjectMembers.Remove(ctx, pid, alice.ID)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	for i := 0; i < 2; i++ {
		_, err = ac.ProjectMembers.Remove(ctx, pid, bob.ID)
		require.NoError(t, err, "removing is idempotent")
	}
	_, _, err = c.ProjectMembers.Get(ctx, pid, bob.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound)

	g, _, err := ac.Groups.Create(ctx, &collab.CreateGroupOptions{Name: "G", Path: "g"})
	require.NoError(t, err)
	gm, _, err := ac.GroupMembers.Add(ctx, g.ID, &collab.AddMemberOptions{UserID: bob.ID, AccessLevel: collab.ReporterAccess})
	require.NoError(t, err)
	assert.Empty(t, gm.Email, "group members carry no email")
	_, _, err = ac.GroupMembers.Add(ctx, g.ID, &collab.AddMemberOptions{UserID: bob.ID, AccessLevel: collab.ReporterAccess})
	assert.ErrorIs(t, err, collab.ErrConflict)
	_, _, err = ac.GroupMembers.Add(ctx, g.ID, &collab.AddMemberOptions{UserID: alice.ID + 500, AccessLevel: collab.ReporterAccess})
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, _, err = ac.GroupMembers.Update(ctx, g.ID, bob.ID, &collab.UpdateMemberOptions{AccessLevel: 99})
	assert.ErrorIs(t, err, collab.ErrUnprocessable)
	_, _, err = ac.GroupMembers.Update(ctx, g.ID, bob.ID, &collab.UpdateMemberOptions{AccessLevel: collab.MasterAccess})
	require.NoError(t, err)
	members, _, err := bc.GroupMembers.List(ctx, g.ID, nil)
	require.NoError(t, err)
	assert.Len(t, members, 2)
	_, err = ac.GroupMembers.Remove(ctx, g.ID, bob.ID)
	require.NoError(t, err)
	_, err = ac.GroupMembers.Remove(ctx, g.ID, bob.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound, "a non-member is 404 for groups")
	_, _, err = bc.GroupMembers.List(ctx, g.ID, nil)
	assert.ErrorIs(t, err, collab.ErrNotFound)
}

// TestMemberOptionsAreChecked: Add and Update refuse a missing options
// struct, a user id below 1 and an unset access level before any request.
func TestMemberOptionsAreChecked(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	calls := map[string]func() error{
		"project add nil":    func() error { _, _, err := c.ProjectMembers.Add(ctx, 1, nil); return err },
		"group add nil":      func() error { _, _, err := c.GroupMembers.Add(ctx, 1, nil); return err },
		"project update nil": func() error { _, _, err := c.ProjectMembers.Update(ctx, 1, 2, nil); return err },
		"group update nil":   func() error { _, _, err := c.GroupMembers.Update(ctx, 1, 2, nil); return err },
		"project add no level": func() error {
			_, _, err := c.ProjectMembers.Add(ctx, 1, &collab.AddMemberOptions{UserID: 2})
			return err
		},
		"group update no level": func() error {
			_, _, err := c.GroupMembers.Update(ctx, 1, 2, &collab.UpdateMemberOptions{})
			return err
		},
		"project update user 0": func() error {
			_, _, err := c.ProjectMembers.Update(ctx, 1, 0, &collab.UpdateMemberOptions{AccessLevel: collab.GuestAccess})
			return err
		},
	}
	want := map[string]string{
		"project add nil": "opt", "group add nil": "opt", "project update nil": "opt", "group update nil": "opt",
		"project add no level": "opt.AccessLevel", "group update no level": "opt.AccessLevel", "project update user 0": "members id",
	}
	for name, call := range calls {
		err := call()
		var ae *collab.ArgumentError
		require.ErrorAs(t, err, &ae, name)
		assert.Equal(t, want[name], ae.Arg, name)
	}
	assert.Zero(t, m.Count(), "no request was sent")
}

// TestUnpagedListsTakeOptions: the lists this server sends whole take an
// options argument that may be nil, and send no parameter for it.
func TestUnpagedListsTakeOptions(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	m.Reply(200, `[]`)
	_, _, err := c.Labels.List(ctx, 1, &collab.ListLabelsOptions{})
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/1/labels", nil)
	m.Reply(200, `[]`)
	_, _, err = c.Branches.List(ctx, 1, &collab.ListBranchesOptions{})
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/1/repository/branches", nil)
	m.Reply(200, `[]`)
	_, _, err = c.GroupMembers.List(ctx, 1, &collab.ListGroupMembersOptions{})
	require.NoError(t, err)
	m.AssertRequest("GET", "groups/1/members", nil)
}
