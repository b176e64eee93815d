package collabtest_test

import (
	"context"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSeedReturnsWhatTheAPIAnswers: each seed's record equals the answer
// of the API's GET for it, read right after the seed.
func TestSeedReturnsWhatTheAPIAnswers(t *testing.T) {
	ctx := context.Background()
	srv := collabtest.NewTestServer(t)
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.Admin.Token), collab.WithoutRetries())
	require.NoError(t, err)
	alice := srv.Seed.User("alice")
	assert.Equal(t, "alice", alice.Username)

	p := srv.Seed.Project(alice, "Repo", collab.InternalVisibility)
	require.NotNil(t, p)
	assert.Equal(t, collab.InternalVisibility, p.VisibilityLevel)
	got, _, err := c.Projects.Get(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, p, got)

	bob := srv.Seed.User("bob")
	m := srv.Seed.Member(p, bob, collab.DeveloperAccess)
	require.NotNil(t, m)
	assert.Equal(t, collab.DeveloperAccess, m.AccessLevel)
	gotMember, _, err := c.ProjectMembers.Get(ctx, p.ID, bob.ID)
	require.NoError(t, err)
	assert.Equal(t, m, gotMember)

	bug := srv.Seed.Label(p, "bug", "#d9534f")
	require.NotNil(t, bug)
	labels, _, err := c.Labels.List(ctx, p.ID, nil)
	require.NoError(t, err)
	assert.Equal(t, []*collab.Label{bug}, labels)

	is := srv.Seed.Issue(p, bob, "Crash", bug)
	require.NotNil(t, is)
	assert.Equal(t, []string{"bug"}, is.Labels)
	gotIssue, _, err := c.Issues.Get(ctx, p.ID, is.ID)
	require.NoError(t, err)
	assert.Equal(t, is, gotIssue)
	note := srv.Seed.IssueNote(is, alice, "me too")
	require.NotNil(t, note)
	gotNote, _, err := c.Notes.GetIssueNote(ctx, p.ID, is.ID, note.ID)
	require.NoError(t, err)
	assert.Equal(t, note, gotNote)

	br := srv.Seed.Branch(p, "fix/typo")
	require.NotNil(t, br)
	gotBranch, _, err := c.Branches.Get(ctx, p.ID, "fix/typo")
	require.NoError(t, err)
	assert.Equal(t, br, gotBranch)
	mr := srv.Seed.MergeRequest(p, bob, "fix/typo", "master", "Fix the typo")
	require.NotNil(t, mr)
	gotMR, _, err := c.MergeRequests.Get(ctx, p.ID, mr.ID)
	require.NoError(t, err)
	assert.Equal(t, mr, gotMR)

	ms := srv.Seed.Milestone(p, "v1")
	require.NotNil(t, ms)
	assert.Equal(t, 1, ms.IID)
	gotMS, _, err := c.Milestones.Get(ctx, p.ID, ms.ID)
	require.NoError(t, err)
	assert.Equal(t, ms, gotMS)

	b := srv.Seed.Build(p, collabtest.BuildSpec{Name: "rspec", Status: "success"})
	require.NotNil(t, b)
	gotBuild, _, err := c.Builds.Get(ctx, p.ID, b.ID)
	require.NoError(t, err)
	assert.Equal(t, b, gotBuild)

	g := srv.Seed.Group(alice, "Docs", "docs", collab.PublicVisibility)
	require.NotNil(t, g)
	gotGroup, _, err := c.Groups.Get(ctx, g.ID)
	require.NoError(t, err)
	assert.Equal(t, g.Name, gotGroup.Name)
	assert.Equal(t, collab.PublicVisibility, gotGroup.VisibilityLevel)
	gp := srv.Seed.GroupProject(g, alice, "Site", collab.PrivateVisibility)
	require.NotNil(t, gp)
	assert.Equal(t, "docs/site", gp.PathWithNamespace)
	gm := srv.Seed.GroupMember(g, bob, collab.ReporterAccess)
	require.NotNil(t, gm)
	assert.Equal(t, collab.ReporterAccess, gm.AccessLevel)
	require.NoError(t, srv.Err())
}

// TestSeededLabelsExist: labels an issue is seeded with, by the typed seed
// or the older one, are the project's labels, as on a real server.
func TestSeededLabelsExist(t *testing.T) {
	srv := collabtest.NewTestServer(t)
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(srv.Admin.Token), collab.WithoutRetries())
	require.NoError(t, err)
	p := srv.Seed.Project(srv.Admin, "Repo", collab.PrivateVisibility)
	srv.AddIssue(p.ID, srv.AdminID, "Crash", "bug", "feature") //nolint:staticcheck // the deprecated seed must keep this promise too
	labels, _, err := c.Labels.List(context.Background(), p.ID, nil)
	require.NoError(t, err)
	var names []string
	for _, l := range labels {
		names = append(names, l.Name)
	}
	assert.ElementsMatch(t, []string{"bug", "feature"}, names)
}

// TestSeedMistakes: a seed that a real server could not hold fails the
// test and returns nil.
func TestSeedMistakes(t *testing.T) {
	srv, err := collabtest.NewServer()
	require.NoError(t, err)
	defer srv.Close()
	p := srv.Seed.Project(srv.Admin, "Repo", collab.PrivateVisibility)
	other := srv.Seed.Project(srv.Admin, "Other", collab.PrivateVisibility)
	foreign := srv.Seed.Label(other, "bug", "#d9534f")
	assert.Nil(t, srv.Seed.Issue(p, srv.Admin, "Crash", foreign), "a label of another project")
	assert.Nil(t, srv.Seed.Label(p, "x", "red"), "a color that is not #RRGGBB")
	assert.Nil(t, srv.Seed.MergeRequest(p, srv.Admin, "nope", "master", "t"), "a branch the repository lacks")
	assert.Nil(t, srv.Seed.Project(srv.Admin, "Bad", collab.VisibilityLevel(5)))
	assert.Nil(t, srv.Seed.Member(p, srv.Admin, collab.AccessLevel(35)))
	assert.Nil(t, srv.Seed.Milestone(nil, "v1"))
	err = srv.Err()
	require.Error(t, err)
	for _, want := range []string{"Seed.Issue", "Seed.Label", "Seed.MergeRequest", "visibility 5", "access level 35", "Seed.Milestone: nil project"} {
		assert.Contains(t, err.Error(), want)
	}
}
