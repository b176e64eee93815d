package collab_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

// logged lists the fake's requests as "METHOD path" since the last clear,
// and clears the log.
func logged(srv *collabtest.Server) []string {
	var out []string
	for _, r := range srv.Requests() {
		out = append(out, r.Method+" "+strings.TrimPrefix(r.Path, "/api/v3"))
	}
	srv.ClearRequests()
	return out
}

func TestOnceMarker(t *testing.T) {
	m := collab.Once{Key: "deploy 42"}.Marker()
	assert.Regexp(t, `^<!-- collab-once [0-9a-f]{32} -->$`, m)
	assert.Equal(t, m, collab.Once{Key: "deploy 42", Fresh: true}.Marker(), "Fresh is no part of the marker")
	assert.NotEqual(t, m, collab.Once{Key: "deploy 43"}.Marker())
	assert.NotContains(t, collab.Once{Key: "--> <b>"}.Marker(), "<b>", "the key never reaches the text")
}

// TestCreateNoteOnce: a fresh call posts without reading; a later attempt
// reads the thread and finds what the first made; another key posts again.
func TestCreateNoteOnce(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	project := srv.Seed.Project(srv.Admin, "app", collab.PrivateVisibility)
	pid := project.ID
	srv.Seed.Branch(project, "feature")
	issue := srv.Seed.Issue(project, srv.Admin, "Crash").ID
	mr := srv.Seed.MergeRequest(project, srv.Admin, "feature", "master", "Fix").ID
	for _, thread := range []struct {
		path   string
		create func(collab.Once, string) (*collab.Note, *collab.Response, error)
	}{
		{"/projects/%d/issues/%d/notes", func(o collab.Once, body string) (*collab.Note, *collab.Response, error) {
			return c.Notes.CreateIssueNoteOnce(ctx, pid, issue, o, &collab.CreateNoteOptions{Body: body})
		}},
		{"/projects/%d/merge_requests/%d/notes", func(o collab.Once, body string) (*collab.Note, *collab.Response, error) {
			return c.Notes.CreateMergeRequestNoteOnce(ctx, pid, mr, o, &collab.CreateNoteOptions{Body: body})
		}},
	} {
		id := issue
		if strings.Contains(thread.path, "merge") {
			id = mr
		}
		path := fmt.Sprintf(thread.path, pid, id)
		srv.ClearRequests()
		first, resp, err := thread.create(collab.Once{Key: "reply", Fresh: true}, "Thanks")
		require.NoError(t, err)
		assert.Equal(t, http.StatusCreated, resp.StatusCode)
		assert.Equal(t, "Thanks\n\n"+collab.Once{Key: "reply"}.Marker(), first.Body)
		assert.Equal(t, []string{"POST " + path}, logged(srv), "a fresh call only posts")

		again, resp, err := thread.create(collab.Once{Key: "reply"}, "Thanks, again")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "found, not created")
		assert.Equal(t, first.ID, again.ID)
		assert.Equal(t, []string{"GET " + path}, logged(srv))

		other, _, err := thread.create(collab.Once{Key: "another"}, "Thanks")
		require.NoError(t, err)
		assert.NotEqual(t, first.ID, other.ID)
		assert.Equal(t, []string{"GET " + path, "POST " + path}, logged(srv))
	}
}

// TestCreateNoteOnceWalksPages: the lookup reads every page of the thread.
func TestCreateNoteOnceWalksPages(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	project := srv.Seed.Project(srv.Admin, "app", collab.PrivateVisibility)
	pid := project.ID
	issueRecord := srv.Seed.Issue(project, srv.Admin, "Crash")
	issue := issueRecord.ID
	for range 150 {
		srv.Seed.IssueNote(issueRecord, srv.Admin, "+1")
	}
	opt := &collab.CreateNoteOptions{Body: "Done"}
	first, _, err := c.Notes.CreateIssueNoteOnce(ctx, pid, issue, collab.Once{Key: "k", Fresh: true}, opt)
	require.NoError(t, err)
	assert.Equal(t, &collab.CreateNoteOptions{Body: "Done"}, opt, "the marker goes on a copy of the caller's options")
	srv.ClearRequests()
	again, _, err := c.Notes.CreateIssueNoteOnce(ctx, pid, issue, collab.Once{Key: "k"}, &collab.CreateNoteOptions{Body: "Done"})
	require.NoError(t, err)
	assert.Equal(t, first.ID, again.ID)
	assert.Len(t, logged(srv), 2, "two pages of 100")
}

// TestCreateIssueOnce: the marker ends the description; a later attempt
// finds the issue among the caller's newest 100, and no further back.
func TestCreateIssueOnce(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	project := srv.Seed.Project(srv.Admin, "app", collab.PrivateVisibility)
	pid := project.ID
	o := collab.Once{Key: "release 1.2"}
	first, resp, err := c.Issues.CreateOnce(ctx, pid, o, &collab.CreateIssueOptions{Title: "Release 1.2"})
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	require.NotNil(t, first.Description)
	assert.Equal(t, o.Marker(), *first.Description, "no description: the marker alone")
	assert.Equal(t, []string{"GET /issues", "POST /projects/" + strconv.Itoa(pid) + "/issues"}, logged(srv))

	opt := &collab.CreateIssueOptions{Title: "Release 1.2", Description: collab.Ptr("Notes")}
	again, resp, err := c.Issues.CreateOnce(ctx, pid, o, opt)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, first.ID, again.ID)
	assert.Equal(t, "Notes", *opt.Description, "the caller's options are left alone")

	described, _, err := c.Issues.CreateOnce(ctx, pid, collab.Once{Key: "release 1.3", Fresh: true}, opt)
	require.NoError(t, err)
	assert.Equal(t, "Notes\n\n"+collab.Once{Key: "release 1.3"}.Marker(), *described.Description)

	for range 100 {
		srv.Seed.Issue(project, srv.Admin, "Later")
	}
	srv.ClearRequests()
	late, _, err := c.Issues.CreateOnce(ctx, pid, o, opt)
	require.NoError(t, err)
	assert.NotEqual(t, first.ID, late.ID, "past the newest 100, the lookup does not reach")
	assert.Equal(t, []string{"GET /issues", "POST /projects/" + strconv.Itoa(pid) + "/issues"}, logged(srv), "one page read")
}

// TestCreateMergeRequestOnce: found among the project's newest merge
// requests; with TargetProjectID, among the target's.
func TestCreateMergeRequestOnce(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	project := srv.Seed.Project(srv.Admin, "app", collab.PrivateVisibility)
	pid := project.ID
	srv.Seed.Branch(project, "feature")
	opt := &collab.CreateMergeRequestOptions{SourceBranch: "feature", TargetBranch: "master", Title: "Fix"}
	first, _, err := c.MergeRequests.CreateOnce(ctx, pid, collab.Once{Key: "fix", Fresh: true}, opt)
	require.NoError(t, err)
	assert.Equal(t, []string{"POST /projects/" + strconv.Itoa(pid) + "/merge_requests"}, logged(srv))
	again, resp, err := c.MergeRequests.CreateOnce(ctx, pid, collab.Once{Key: "fix"}, opt)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, first.ID, again.ID)
	assert.Nil(t, opt.Description)

	other := srv.Seed.Project(srv.Admin, "upstream", collab.PrivateVisibility).ID
	opt.TargetProjectID = &other
	srv.ClearRequests()
	_, _, _ = c.MergeRequests.CreateOnce(ctx, pid, collab.Once{Key: "fix"}, opt)
	assert.Equal(t, "GET /projects/"+strconv.Itoa(other)+"/merge_requests", logged(srv)[0], "looked for in the target")
}

// TestCreateOnceRefuses: a missing key, body or required option is an
// *ArgumentError, and nothing is sent; a failed lookup creates nothing.
func TestCreateOnceRefuses(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	project := srv.Seed.Project(srv.Admin, "app", collab.PrivateVisibility)
	pid := project.ID
	issue := srv.Seed.Issue(project, srv.Admin, "Crash").ID
	srv.ClearRequests()
	for name, call := range map[string]func() error{
		"Once.Key": func() error {
			return errOf(c.Notes.CreateIssueNoteOnce(ctx, pid, issue, collab.Once{}, &collab.CreateNoteOptions{Body: "hi"}))
		},
		"opt.Body": func() error {
			return errOf(c.Notes.CreateMergeRequestNoteOnce(ctx, pid, 1, collab.Once{Key: "k"}, &collab.CreateNoteOptions{Body: " \n"}))
		},
		"opt (note)": func() error { return errOf(c.Notes.CreateIssueNoteOnce(ctx, pid, issue, collab.Once{Key: "k"}, nil)) },
		"opt":        func() error { return errOf(c.Issues.CreateOnce(ctx, pid, collab.Once{Key: "k"}, nil)) },
		"opt.Title": func() error {
			return errOf(c.Issues.CreateOnce(ctx, pid, collab.Once{Key: "k"}, &collab.CreateIssueOptions{}))
		},
		"opt.SourceBranch": func() error {
			return errOf(c.MergeRequests.CreateOnce(ctx, pid, collab.Once{Key: "k"}, &collab.CreateMergeRequestOptions{}))
		},
	} {
		var ae *collab.ArgumentError
		require.ErrorAs(t, call(), &ae, name)
		assert.Equal(t, strings.TrimSuffix(strings.TrimSuffix(name, " (issue)"), " (note)"), ae.Arg)
	}
	assert.Empty(t, logged(srv), "nothing sent")

	srv.FailNext(1, http.StatusInternalServerError)
	_, _, err := c.Notes.CreateIssueNoteOnce(ctx, pid, issue, collab.Once{Key: "k"}, &collab.CreateNoteOptions{Body: "hi"})
	assert.ErrorIs(t, err, collab.ErrServer)
	notes, _, err := c.Notes.ListIssueNotes(ctx, pid, issue, nil)
	require.NoError(t, err)
	assert.Empty(t, notes, "a failed lookup creates nothing")
}

// errOf keeps the error of a call's three results.
func errOf[T any](_ T, _ *collab.Response, err error) error { return err }
