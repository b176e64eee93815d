package collab

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/collabsvc/collab/collabtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	m := Once{Key: "deploy 42"}.Marker()
	assert.Regexp(t, `^<!-- collab-once [0-9a-f]{32} -->$`, m)
	assert.Equal(t, m, Once{Key: "deploy 42", Fresh: true}.Marker(), "Fresh is no part of the marker")
	assert.NotEqual(t, m, Once{Key: "deploy 43"}.Marker())
	assert.NotContains(t, Once{Key: "--> <b>"}.Marker(), "<b>", "the key never reaches the text")
}

// TestCreateNoteOnce: a fresh call posts without reading; a later attempt
// reads the thread and finds what the first made; another key posts again.
func TestCreateNoteOnce(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	pid := srv.AddProject(srv.AdminID, "app", 0)
	srv.AddBranch(pid, "feature", "")
	issue := srv.AddIssue(pid, srv.AdminID, "Crash")
	mr := srv.AddMergeRequest(pid, srv.AdminID, "feature", "master", "Fix")
	for _, thread := range []struct {
		path   string
		create func(Once, string) (*Note, *Response, error)
	}{
		{"/projects/%d/issues/%d/notes", func(o Once, body string) (*Note, *Response, error) {
			return c.Notes.CreateIssueNoteOnce(ctx, pid, issue, o, &CreateNoteOptions{Body: body})
		}},
		{"/projects/%d/merge_requests/%d/notes", func(o Once, body string) (*Note, *Response, error) {
			return c.Notes.CreateMergeRequestNoteOnce(ctx, pid, mr, o, &CreateNoteOptions{Body: body})
		}},
	} {
		id := issue
		if strings.Contains(thread.path, "merge") {
			id = mr
		}
		path := fmt.Sprintf(thread.path, pid, id)
		srv.ClearRequests()
		first, resp, err := thread.create(Once{Key: "reply", Fresh: true}, "Thanks")
		require.NoError(t, err)
		assert.Equal(t, http.StatusCreated, resp.StatusCode)
		assert.Equal(t, "Thanks\n\n"+Once{Key: "reply"}.Marker(), first.Body)
		assert.Equal(t, []string{"POST " + path}, logged(srv), "a fresh call only posts")

		again, resp, err := thread.create(Once{Key: "reply"}, "Thanks, again")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "found, not created")
		assert.Equal(t, first.ID, again.ID)
		assert.Equal(t, []string{"GET " + path}, logged(srv))

		other, _, err := thread.create(Once{Key: "another"}, "Thanks")
		require.NoError(t, err)
		assert.NotEqual(t, first.ID, other.ID)
		assert.Equal(t, []string{"GET " + path, "POST " + path}, logged(srv))
	}
}

// TestCreateNoteOnceWalksPages: the lookup reads every page of the thread.
func TestCreateNoteOnceWalksPages(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	pid := srv.AddProject(srv.AdminID, "app", 0)
	issue := srv.AddIssue(pid, srv.AdminID, "Crash")
	for range 150 {
		srv.AddNote(pid, "Issue", issue, srv.AdminID, "+1")
	}
	opt := &CreateNoteOptions{Body: "Done"}
	first, _, err := c.Notes.CreateIssueNoteOnce(ctx, pid, issue, Once{Key: "k", Fresh: true}, opt)
	require.NoError(t, err)
	assert.Equal(t, &CreateNoteOptions{Body: "Done"}, opt, "the marker goes on a copy of the caller's options")
	srv.ClearRequests()
	again, _, err := c.Notes.CreateIssueNoteOnce(ctx, pid, issue, Once{Key: "k"}, &CreateNoteOptions{Body: "Done"})
	require.NoError(t, err)
	assert.Equal(t, first.ID, again.ID)
	assert.Len(t, logged(srv), 2, "two pages of 100")
}

// TestCreateIssueOnce: the marker ends the description; a later attempt
// finds the issue among the caller's newest 100, and no further back.
func TestCreateIssueOnce(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	pid := srv.AddProject(srv.AdminID, "app", 0)
	o := Once{Key: "release 1.2"}
	first, resp, err := c.Issues.CreateOnce(ctx, pid, o, &CreateIssueOptions{Title: "Release 1.2"})
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	require.NotNil(t, first.Description)
	assert.Equal(t, o.Marker(), *first.Description, "no description: the marker alone")
	assert.Equal(t, []string{"GET /issues", "POST /projects/" + strconv.Itoa(pid) + "/issues"}, logged(srv))

	opt := &CreateIssueOptions{Title: "Release 1.2", Description: Ptr("Notes")}
	again, resp, err := c.Issues.CreateOnce(ctx, pid, o, opt)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, first.ID, again.ID)
	assert.Equal(t, "Notes", *opt.Description, "the caller's options are left alone")

	described, _, err := c.Issues.CreateOnce(ctx, pid, Once{Key: "release 1.3", Fresh: true}, opt)
	require.NoError(t, err)
	assert.Equal(t, "Notes\n\n"+Once{Key: "release 1.3"}.Marker(), *described.Description)

	for range 100 {
		srv.AddIssue(pid, srv.AdminID, "Later")
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
	pid := srv.AddProject(srv.AdminID, "app", 0)
	srv.AddBranch(pid, "feature", "")
	opt := &CreateMergeRequestOptions{SourceBranch: "feature", TargetBranch: "master", Title: "Fix"}
	first, _, err := c.MergeRequests.CreateOnce(ctx, pid, Once{Key: "fix", Fresh: true}, opt)
	require.NoError(t, err)
	assert.Equal(t, []string{"POST /projects/" + strconv.Itoa(pid) + "/merge_requests"}, logged(srv))
	again, resp, err := c.MergeRequests.CreateOnce(ctx, pid, Once{Key: "fix"}, opt)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, first.ID, again.ID)
	assert.Nil(t, opt.Description)

	other := srv.AddProject(srv.AdminID, "upstream", 0)
	opt.TargetProjectID = &other
	srv.ClearRequests()
	_, _, _ = c.MergeRequests.CreateOnce(ctx, pid, Once{Key: "fix"}, opt)
	assert.Equal(t, "GET /projects/"+strconv.Itoa(other)+"/merge_requests", logged(srv)[0], "looked for in the target")
}

// TestCreateOnceRefuses: a missing key, body or required option is an
// *ArgumentError, and nothing is sent; a failed lookup creates nothing.
func TestCreateOnceRefuses(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	pid := srv.AddProject(srv.AdminID, "app", 0)
	issue := srv.AddIssue(pid, srv.AdminID, "Crash")
	srv.ClearRequests()
	for name, call := range map[string]func() error{
		"Once.Key": func() error {
			return errOf(c.Notes.CreateIssueNoteOnce(ctx, pid, issue, Once{}, &CreateNoteOptions{Body: "hi"}))
		},
		"opt.Body": func() error {
			return errOf(c.Notes.CreateMergeRequestNoteOnce(ctx, pid, 1, Once{Key: "k"}, &CreateNoteOptions{Body: " \n"}))
		},
		"opt (note)": func() error { return errOf(c.Notes.CreateIssueNoteOnce(ctx, pid, issue, Once{Key: "k"}, nil)) },
		"opt":        func() error { return errOf(c.Issues.CreateOnce(ctx, pid, Once{Key: "k"}, nil)) },
		"opt.Title":  func() error { return errOf(c.Issues.CreateOnce(ctx, pid, Once{Key: "k"}, &CreateIssueOptions{})) },
		"opt.SourceBranch": func() error {
			return errOf(c.MergeRequests.CreateOnce(ctx, pid, Once{Key: "k"}, &CreateMergeRequestOptions{}))
		},
		"Once.Key (issue)": func() error { return errOf(c.Issues.CreateOnce(ctx, pid, Once{}, &CreateIssueOptions{Title: "t"})) },
	} {
		var ae *ArgumentError
		require.ErrorAs(t, call(), &ae, name)
		assert.Equal(t, strings.TrimSuffix(strings.TrimSuffix(name, " (issue)"), " (note)"), ae.Arg)
	}
	assert.Empty(t, logged(srv), "nothing sent")

	srv.FailNext(1, http.StatusInternalServerError)
	_, _, err := c.Notes.CreateIssueNoteOnce(ctx, pid, issue, Once{Key: "k"}, &CreateNoteOptions{Body: "hi"})
	assert.ErrorIs(t, err, ErrServer)
	notes, _, err := c.Notes.ListIssueNotes(ctx, pid, issue, nil)
	require.NoError(t, err)
	assert.Empty(t, notes, "a failed lookup creates nothing")
}

// errOf keeps the error of a call's three results.
func errOf[T any](_ T, _ *Response, err error) error { return err }
