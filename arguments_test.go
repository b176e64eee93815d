package collab

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestArgumentErrors checks every check the resource methods make before
// sending: each returns an *ArgumentError naming the argument, matching
// ErrInvalidArgument, and no request leaves.
func TestArgumentErrors(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	first := func(it func(func(*Build, error) bool)) error {
		var err error
		it(func(_ *Build, e error) bool { err = e; return false })
		return err
	}
	cases := []struct {
		arg  string
		call func() error
	}{
		{"opt", func() error { _, _, err := c.Issues.Create(ctx, 1, nil); return err }},
		{"opt.Title", func() error { _, _, err := c.Issues.Create(ctx, 1, &CreateIssueOptions{}); return err }},
		{"iid", func() error { _, _, err := c.Issues.GetByIID(ctx, 1, 0); return err }},
		{"opt", func() error { _, _, err := c.MergeRequests.Create(ctx, 1, nil); return err }},
		{"opt.SourceBranch", func() error {
			_, _, err := c.MergeRequests.Create(ctx, 1, &CreateMergeRequestOptions{TargetBranch: "m", Title: "t"})
			return err
		}},
		{"opt.TargetBranch", func() error {
			_, _, err := c.MergeRequests.Create(ctx, 1, &CreateMergeRequestOptions{SourceBranch: "f", Title: "t"})
			return err
		}},
		{"opt.Title", func() error {
			_, _, err := c.MergeRequests.Create(ctx, 1, &CreateMergeRequestOptions{SourceBranch: "f", TargetBranch: "m"})
			return err
		}},
		{"iid", func() error { _, _, err := c.MergeRequests.GetByIID(ctx, 1, -3); return err }},
		{"opt", func() error { _, _, err := c.Labels.Create(ctx, 1, nil); return err }},
		{"opt.Name", func() error { _, _, err := c.Labels.Create(ctx, 1, &CreateLabelOptions{Color: "#000000"}); return err }},
		{"opt.Color", func() error {
			_, _, err := c.Labels.Create(ctx, 1, &CreateLabelOptions{Name: "x", Color: "red"})
			return err
		}},
		{"opt.Color", func() error {
			_, _, err := c.Labels.Create(ctx, 1, &CreateLabelOptions{Name: "x", Color: "#12345"})
			return err
		}},
		{"name", func() error {
			_, _, err := c.Labels.Update(ctx, 1, "", &UpdateLabelOptions{NewName: Ptr("y")})
			return err
		}},
		{"opt", func() error { _, _, err := c.Labels.Update(ctx, 1, "x", nil); return err }},
		{"opt", func() error {
			_, _, err := c.Labels.Update(ctx, 1, "x", &UpdateLabelOptions{Description: Ptr("d")})
			return err
		}},
		{"opt.Color", func() error {
			_, _, err := c.Labels.Update(ctx, 1, "x", &UpdateLabelOptions{Color: Ptr("#GGGGGG")})
			return err
		}},
		{"name", func() error { _, _, err := c.Labels.Delete(ctx, 1, ""); return err }},
		{"name", func() error { _, _, err := c.Labels.Subscribe(ctx, 1, ""); return err }},
		{"name", func() error { _, _, err := c.Labels.Unsubscribe(ctx, 1, ""); return err }},
		{"opt", func() error { _, _, err := c.Milestones.Create(ctx, 1, nil); return err }},
		{"opt.Title", func() error { _, _, err := c.Milestones.Create(ctx, 1, &CreateMilestoneOptions{}); return err }},
		{"opt.DueDate", func() error {
			_, _, err := c.Milestones.Create(ctx, 1, &CreateMilestoneOptions{Title: "t", DueDate: Ptr("2030-1-31")})
			return err
		}},
		{"opt.DueDate", func() error {
			_, _, err := c.Milestones.Update(ctx, 1, 2, &UpdateMilestoneOptions{DueDate: Ptr("31.01.2030")})
			return err
		}},
		{"opt.UserID", func() error {
			_, _, err := c.ProjectMembers.Add(ctx, 1, &AddMemberOptions{UserID: 0, AccessLevel: DeveloperAccess})
			return err
		}},
		{"opt.UserID", func() error {
			_, _, err := c.GroupMembers.Add(ctx, 1, &AddMemberOptions{UserID: -2, AccessLevel: DeveloperAccess})
			return err
		}},
		{"toProjectID", func() error { _, _, err := c.Issues.Move(ctx, 1, 2, 0); return err }},
		{"opt", func() error { _, _, err := c.Projects.Create(ctx, nil); return err }},
		{"opt.Name", func() error { _, _, err := c.Projects.Create(ctx, &CreateProjectOptions{}); return err }},
		{"opt", func() error { _, _, err := c.Projects.CreateForUser(ctx, 2, nil); return err }},
		{"opt.Name", func() error { _, _, err := c.Projects.CreateForUser(ctx, 2, &CreateProjectOptions{}); return err }},
		{"opt", func() error { _, _, err := c.Projects.Share(ctx, 1, nil); return err }},
		{"opt.GroupID", func() error {
			_, _, err := c.Projects.Share(ctx, 1, &ShareProjectOptions{GroupAccess: DeveloperAccess})
			return err
		}},
		{"opt.GroupAccess", func() error { _, _, err := c.Projects.Share(ctx, 1, &ShareProjectOptions{GroupID: 3}); return err }},
		{"query", func() error { _, _, err := c.Projects.Search(ctx, "", nil); return err }},
		{"r", func() error { _, _, err := c.Projects.UploadFile(ctx, 1, nil, "a.txt"); return err }},
		{"filename", func() error { _, _, err := c.Projects.UploadFile(ctx, 1, strings.NewReader("x"), ""); return err }},
		{"opt", func() error { _, _, err := c.Groups.Create(ctx, nil); return err }},
		{"opt.Name", func() error { _, _, err := c.Groups.Create(ctx, &CreateGroupOptions{Path: "p"}); return err }},
		{"opt.Path", func() error { _, _, err := c.Groups.Create(ctx, &CreateGroupOptions{Name: "n"}); return err }},
		{"opt", func() error { _, _, err := c.Hooks.Add(ctx, 1, nil); return err }},
		{"opt.URL", func() error { _, _, err := c.Hooks.Add(ctx, 1, &AddHookOptions{}); return err }},
		{"opt", func() error { _, _, err := c.Hooks.Update(ctx, 1, 2, nil); return err }},
		{"opt.URL", func() error { _, _, err := c.Hooks.Update(ctx, 1, 2, &AddHookOptions{}); return err }},
		{"branch", func() error { _, _, err := c.Branches.Get(ctx, 1, ""); return err }},
		{"branch", func() error { _, _, err := c.Branches.Protect(ctx, 1, ""); return err }},
		{"branch", func() error { _, _, err := c.Branches.Unprotect(ctx, 1, ""); return err }},
		{"opt.Body", func() error {
			_, _, err := c.Notes.CreateIssueNote(ctx, 1, 2, &CreateNoteOptions{Body: ""})
			return err
		}},
		{"opt.Body", func() error {
			_, _, err := c.Notes.UpdateMergeRequestNote(ctx, 1, 2, 3, &UpdateNoteOptions{Body: ""})
			return err
		}},
		{"opt", func() error { _, _, err := c.Notes.CreateMergeRequestNote(ctx, 1, 2, nil); return err }},
		{"name", func() error { _, _, err := c.AwardEmoji.CreateIssueAward(ctx, 1, 2, ""); return err }},
		{"name", func() error { _, _, err := c.AwardEmoji.CreateMergeRequestAward(ctx, 1, 2, ":thumbsup:"); return err }},
		{"awardID", func() error { _, _, err := c.AwardEmoji.GetIssueAward(ctx, 1, 2, 0); return err }},
		{"awardID", func() error { _, _, err := c.AwardEmoji.DeleteMergeRequestNoteAward(ctx, 1, 2, 3, -1); return err }},
		{"noteID", func() error { _, _, err := c.AwardEmoji.ListIssueNoteAwards(ctx, 1, 2, 0, nil); return err }},
		{"opt.Scope[1]", func() error {
			_, _, err := c.Builds.List(ctx, 1, &ListBuildsOptions{Scope: BuildScopes{BuildFailed, "succeeded"}})
			return err
		}},
		{"opt.Scope[0]", func() error {
			_, _, err := c.Builds.ListForCommit(ctx, 1, "abc", &ListBuildsForCommitOptions{Scope: BuildScopes{"Pending"}})
			return err
		}},
		{"opt.Scope[0]", func() error { return first(c.Builds.All(ctx, 1, &ListBuildsOptions{Scope: BuildScopes{"x"}})) }},
		{"sha", func() error { _, _, err := c.Builds.ListForCommit(ctx, 1, "", nil); return err }},
		{"sha", func() error { return first(c.Builds.AllForCommit(ctx, 1, "", nil)) }},
		{"w", func() error { _, err := c.Builds.Artifacts(ctx, 1, 2, nil); return err }},
		{"w", func() error { _, err := c.Builds.Trace(ctx, 1, 2, nil); return err }},
	}
	for _, tc := range cases {
		err := tc.call()
		require.Error(t, err, tc.arg)
		assert.ErrorIs(t, err, ErrInvalidArgument, "%s: %v", tc.arg, err)
		var ae *ArgumentError
		if assert.ErrorAs(t, err, &ae, tc.arg) {
			assert.Equal(t, tc.arg, ae.Arg, "%v", err)
			assert.NotEmpty(t, ae.Reason)
			assert.True(t, strings.HasPrefix(err.Error(), "collab: invalid argument "+tc.arg+": "), err.Error())
		}
	}
	assert.Zero(t, m.Count(), "refused calls send nothing")
}

// TestClosedSetsAreTyped pins the typed fields, so that a plain string (or
// a value of another set, such as IssueClosed for a state event) cannot be
// assigned to them.
func TestClosedSetsAreTyped(t *testing.T) {
	for _, tc := range []struct {
		opt   any
		field string
		want  any
	}{
		{ListIssuesOptions{}, "State", IssueOpened},
		{ListIssuesOptions{}, "OrderBy", OrderByCreatedAt},
		{ListIssuesOptions{}, "Sort", SortAsc},
		{UpdateIssueOptions{}, "StateEvent", IssueClose},
		{ListMergeRequestsOptions{}, "State", MergeRequestMerged},
		{ListMergeRequestsOptions{}, "OrderBy", OrderByUpdatedAt},
		{ListMergeRequestsOptions{}, "Sort", SortDesc},
		{UpdateMergeRequestOptions{}, "StateEvent", MergeRequestMerge},
		{ListMilestonesOptions{}, "State", MilestoneActive},
		{UpdateMilestoneOptions{}, "StateEvent", MilestoneActivate},
		{ListProjectsOptions{}, "OrderBy", ProjectOrderByLastActivityAt},
		{ListProjectsOptions{}, "Sort", SortAsc},
		{SearchProjectsOptions{}, "OrderBy", ProjectOrderByName},
		{SearchProjectsOptions{}, "Sort", SortDesc},
	} {
		f, ok := reflect.TypeOf(tc.opt).FieldByName(tc.field)
		require.True(t, ok, "%T.%s", tc.opt, tc.field)
		assert.Equal(t, reflect.PointerTo(reflect.TypeOf(tc.want)), f.Type, "%T.%s", tc.opt, tc.field)
		assert.NotEqual(t, reflect.TypeOf(""), f.Type.Elem(), "%T.%s", tc.opt, tc.field)
	}
	assert.NotEqual(t, reflect.TypeOf(IssueClosed), reflect.TypeOf(IssueClose), "a state is not a state event")
	assert.Equal(t, reflect.TypeOf(BuildStatus("")), reflect.TypeOf(BuildScopes{}).Elem())
}

// TestArgumentErrorIsNotAServerError keeps the two families apart.
func TestArgumentErrorIsNotAServerError(t *testing.T) {
	err := invalidArg("opt.Title", "is required")
	for _, sentinel := range []error{ErrNotFound, ErrBadRequest, ErrServer} {
		assert.False(t, errors.Is(err, sentinel))
	}
	var er *ErrorResponse
	assert.False(t, errors.As(err, &er))
}
