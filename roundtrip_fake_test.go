package collab_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

// TestRoundTripAgainstFake reads every kind of record from the fake server as
// raw JSON and round-trips it, so that the records keep whatever the fake
// sends as well.
func TestRoundTripAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	bob := srv.AddUser("bob", false)
	gid := srv.Seed.Group(srv.Admin, "Docs Team", "docs", collab.InternalVisibility).ID
	project := srv.Seed.Project(srv.Admin, "Site", collab.PublicVisibility)
	pid := project.ID
	srv.Seed.Member(project, bob, collab.DeveloperAccess)
	srv.Seed.Branch(project, "feature/x")
	issueRecord := srv.Seed.Issue(project, bob, "Crash", srv.Seed.Label(project, "bug", "#428BCA"))
	iid := issueRecord.ID
	noteID := srv.Seed.IssueNote(issueRecord, bob, "me too").ID
	mrID := srv.Seed.MergeRequest(project, srv.Admin, "feature/x", "master", "Fix crash").ID
	issue, _, err := c.Issues.Get(ctx, pid, iid)
	require.NoError(t, err)
	_, _, err = c.MergeRequests.Update(ctx, pid, mrID, &collab.UpdateMergeRequestOptions{Description: collab.Ptr(sprintf("Closes #%d", issue.IID))})
	require.NoError(t, err)
	srv.Seed.Build(project, collabtest.BuildSpec{Name: "rubocop", Status: "success", Trace: "ok"})
	_, _, err = c.Hooks.Add(ctx, pid, &collab.AddHookOptions{URL: "https://ci.example.com/hook"})
	require.NoError(t, err)
	_, _, err = c.Labels.Create(ctx, pid, &collab.CreateLabelOptions{Name: "ui", Color: "#d9534f"})
	require.NoError(t, err)
	_, _, err = c.Milestones.Create(ctx, pid, &collab.CreateMilestoneOptions{Title: "v1", DueDate: collab.Ptr("2016-08-01")})
	require.NoError(t, err)
	_, _, err = c.AwardEmoji.CreateIssueAward(ctx, pid, iid, "tada")
	require.NoError(t, err)
	_, _, err = c.AwardEmoji.CreateIssueNoteAward(ctx, pid, iid, noteID, "rocket")
	require.NoError(t, err)
	_, _, err = c.Projects.Share(ctx, pid, &collab.ShareProjectOptions{GroupID: gid, GroupAccess: collab.DeveloperAccess})
	require.NoError(t, err)

	p := sprintf("projects/%d", pid)
	for path, check := range map[string]collab.RoundTripper{
		"projects":                            collab.RecordRoundTrip[collab.Project],
		p:                                     collab.RecordRoundTrip[collab.Project],
		p + "/events":                         collab.RecordRoundTrip[collab.ProjectEvent],
		p + "/members":                        collab.RecordRoundTrip[collab.Member],
		sprintf("groups/%d/members", gid):     collab.RecordRoundTrip[collab.Member],
		"groups":                              collab.RecordRoundTrip[collab.Group],
		sprintf("groups/%d", gid):             collab.RecordRoundTrip[collab.Group],
		p + "/hooks":                          collab.RecordRoundTrip[collab.ProjectHook],
		p + "/repository/branches":            collab.RecordRoundTrip[collab.Branch],
		p + "/issues":                         collab.RecordRoundTrip[collab.Issue],
		sprintf("%s/issues/%d/notes", p, iid): collab.RecordRoundTrip[collab.Note],
		sprintf("%s/issues/%d/award_emoji", p, iid):                  collab.RecordRoundTrip[collab.AwardEmoji],
		sprintf("%s/issues/%d/notes/%d/award_emoji", p, iid, noteID): collab.RecordRoundTrip[collab.AwardEmoji],
		p + "/merge_requests":                                        collab.RecordRoundTrip[collab.MergeRequest],
		sprintf("%s/merge_requests/%d/commits", p, mrID):             collab.RecordRoundTrip[collab.MergeRequestCommit],
		sprintf("%s/merge_requests/%d/changes", p, mrID):             collab.RecordRoundTrip[collab.MergeRequest],
		sprintf("%s/merge_requests/%d/closes_issues", p, mrID):       collab.RecordRoundTrip[collab.ClosingIssue],
		p + "/labels":               collab.RecordRoundTrip[collab.Label],
		p + "/milestones":           collab.RecordRoundTrip[collab.Milestone],
		p + "/builds":               collab.RecordRoundTrip[collab.Build],
		"application/settings":      collab.RecordRoundTrip[collab.ApplicationSettings],
		"jobqueue/compound_metrics": collab.RecordRoundTrip[collab.CompoundMetrics],
	} {
		t.Run(path, func(t *testing.T) {
			req, err := c.NewRequest(ctx, "GET", path, nil)
			require.NoError(t, err)
			var raw json.RawMessage
			_, err = c.Do(req, &raw)
			require.NoError(t, err)
			assert.NotEqual(t, "[]", string(bytes.Join(bytes.Fields(raw), nil)), "a record to check")
			check(t, raw)
		})
	}
}
