package collab_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
)

const noteJSON = `{"id": 302, "body": "closed", "attachment": null, "author": {"id": 1, "username": "pipin", "name": "Pip",
  "state": "active", "avatar_url": null, "web_url": "http://example.com/pipin"}, "created_at": "2013-10-02T09:22:45Z",
  "updated_at": "2013-10-02T10:22:45Z", "system": true, "noteable_id": 377, "noteable_type": "Issue", "upvote?": true, "downvote?": "false"}`

func wantNote() *collab.Note {
	return &collab.Note{ID: 302, Body: "closed", Author: &collab.User{ID: 1, Username: "pipin", Name: "Pip", State: "active", WebURL: "http://example.com/pipin"},
		CreatedAt: ts("2013-10-02T09:22:45Z"), UpdatedAt: ts("2013-10-02T10:22:45Z"), System: true, NoteableID: 377, NoteableType: "Issue",
		Upvote: true, Downvote: false}
}

func TestNotesUnit(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	for _, kind := range []struct {
		prefix              string
		list                func() ([]*collab.Note, *collab.Response, error)
		get, create, update func() (*collab.Note, *collab.Response, error)
		del                 func() (*collab.Response, error)
	}{
		{"projects/g%2Fp/issues/7/notes",
			func() ([]*collab.Note, *collab.Response, error) {
				return c.Notes.ListIssueNotes(ctx, "g/p", 7, &collab.ListOptions{Page: 2})
			},
			func() (*collab.Note, *collab.Response, error) { return c.Notes.GetIssueNote(ctx, "g/p", 7, 302) },
			func() (*collab.Note, *collab.Response, error) {
				return c.Notes.CreateIssueNote(ctx, "g/p", 7, &collab.CreateNoteOptions{Body: "hi"})
			},
			func() (*collab.Note, *collab.Response, error) {
				return c.Notes.UpdateIssueNote(ctx, "g/p", 7, 302, &collab.UpdateNoteOptions{Body: "edited"})
			},
			func() (*collab.Response, error) { return c.Notes.DeleteIssueNote(ctx, "g/p", 7, 302) }},
		{"projects/g%2Fp/merge_requests/8/notes",
			func() ([]*collab.Note, *collab.Response, error) {
				return c.Notes.ListMergeRequestNotes(ctx, "g/p", 8, &collab.ListOptions{Page: 2})
			},
			func() (*collab.Note, *collab.Response, error) { return c.Notes.GetMergeRequestNote(ctx, "g/p", 8, 302) },
			func() (*collab.Note, *collab.Response, error) {
				return c.Notes.CreateMergeRequestNote(ctx, "g/p", 8, &collab.CreateNoteOptions{Body: "hi"})
			},
			func() (*collab.Note, *collab.Response, error) {
				return c.Notes.UpdateMergeRequestNote(ctx, "g/p", 8, 302, &collab.UpdateNoteOptions{Body: "edited"})
			},
			func() (*collab.Response, error) { return c.Notes.DeleteMergeRequestNote(ctx, "g/p", 8, 302) }},
	} {
		m.Reply(200, "["+noteJSON+"]")
		list, _, err := kind.list()
		require.NoError(t, err)
		m.AssertRequest("GET", kind.prefix, url.Values{"page": {"2"}})
		assert.Equal(t, []*collab.Note{wantNote()}, list)
		m.Reply(200, noteJSON)
		got, _, err := kind.get()
		require.NoError(t, err)
		m.AssertRequest("GET", kind.prefix+"/302", nil)
		assert.Equal(t, wantNote(), got)
		m.Reply(201, noteJSON)
		_, _, err = kind.create()
		require.NoError(t, err)
		m.AssertRequest("POST", kind.prefix, url.Values{"body": {"hi"}})
		m.Reply(200, noteJSON)
		_, _, err = kind.update()
		require.NoError(t, err)
		m.AssertRequest("PUT", kind.prefix+"/302", url.Values{"body": {"edited"}})
		m.Reply(200, noteJSON)
		_, err = kind.del()
		require.NoError(t, err)
		m.AssertRequest("DELETE", kind.prefix+"/302", nil)
		m.Reply(403, `{"message":"403 Forbidden"}`)
		_, err = kind.del()
		assert.ErrorIs(t, err, collab.ErrForbidden)
	}
	before := m.Count()
	_, _, err := c.Notes.CreateIssueNote(ctx, 1, 1, &collab.CreateNoteOptions{Body: ""})
	assert.Error(t, err)
	_, _, err = c.Notes.UpdateMergeRequestNote(ctx, 1, 1, 1, &collab.UpdateNoteOptions{Body: ""})
	assert.Error(t, err)
	assert.Equal(t, before, m.Count())

	var n collab.Note
	require.NoError(t, json.Unmarshal([]byte(`{"id": 1, "upvote": true, "downvote": "true"}`), &n), "event-style keys")
	assert.True(t, bool(n.Upvote))
	assert.True(t, bool(n.Downvote))
	assert.Error(t, json.Unmarshal([]byte(`{"id": "x"}`), &n))
}

// TestBackdatedNotesUnit checks that a comment can be created with an
// earlier creation time, and that a missing body or time is refused before
// sending.
func TestBackdatedNotesUnit(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	then := ts("2013-10-02T09:22:45+02:00").Time
	want := url.Values{"body": {"from the old tracker"}, "created_at": {"2013-10-02T09:22:45+02:00"}}

	m.Reply(201, noteJSON)
	n, _, err := c.Notes.CreateIssueNote(ctx, "g/my.site", 12, &collab.CreateNoteOptions{Body: "from the old tracker", CreatedAt: &then})
	require.NoError(t, err)
	rec := m.AssertRequest("POST", "projects/g%2Fmy%2Esite/issues/12/notes", want)
	assert.Equal(t, "application/x-www-form-urlencoded", rec.Header.Get("Content-Type"))
	assert.Equal(t, wantNote(), n)
	m.Reply(201, noteJSON)
	_, _, err = c.Notes.CreateMergeRequestNote(ctx, 3, 81, &collab.CreateNoteOptions{Body: "from the old tracker", CreatedAt: &then})
	require.NoError(t, err)
	m.AssertRequest("POST", "projects/3/merge_requests/81/notes", want)

	m.Reply(403, `{"message":"403 Forbidden"}`)
	_, _, err = c.Notes.CreateIssueNote(ctx, 3, 12, &collab.CreateNoteOptions{Body: "x", CreatedAt: &then})
	assert.ErrorIs(t, err, collab.ErrForbidden)

	before := m.Count()
	_, _, err = c.Notes.CreateIssueNote(ctx, 3, 12, &collab.CreateNoteOptions{Body: "x", CreatedAt: &time.Time{}})
	var argErr *collab.ArgumentError
	require.ErrorAs(t, err, &argErr)
	assert.Equal(t, "opt.CreatedAt", argErr.Arg)
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	for _, opt := range []*collab.CreateNoteOptions{nil, {CreatedAt: &then}} {
		_, _, err = c.Notes.CreateMergeRequestNote(ctx, 3, 81, opt)
		assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	}
	_, _, err = c.Notes.UpdateIssueNote(ctx, 3, 12, 302, nil)
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	assert.Equal(t, before, m.Count(), "refused calls send nothing")
}

// TestBackdatedNotesAgainstFake backdates a comment on the fake server. The fake
// does not read created_at, so this checks that the call succeeds and that
// the comment is there.
func TestBackdatedNotesAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	project := srv.Seed.Project(srv.Admin, "Imported", collab.PublicVisibility)
	pid := project.ID
	is, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Old bug"})
	require.NoError(t, err)
	srv.Seed.Branch(project, "feature")
	mrID := srv.Seed.MergeRequest(project, srv.Admin, "feature", "master", "Old change").ID
	then := ts("2014-03-01T10:00:00Z").Time

	n, _, err := c.Notes.CreateIssueNote(ctx, pid, is.ID, &collab.CreateNoteOptions{Body: "first seen in 2014", CreatedAt: &then})
	require.NoError(t, err)
	got, _, err := c.Notes.GetIssueNote(ctx, pid, is.ID, n.ID)
	require.NoError(t, err)
	assert.Equal(t, "first seen in 2014", got.Body)
	mn, _, err := c.Notes.CreateMergeRequestNote(ctx, pid, mrID, &collab.CreateNoteOptions{Body: "reviewed in 2014", CreatedAt: &then})
	require.NoError(t, err)
	assert.Equal(t, "MergeRequest", mn.NoteableType)
	_, _, err = c.Notes.CreateIssueNote(ctx, pid, 999999, &collab.CreateNoteOptions{Body: "nowhere", CreatedAt: &then})
	assert.ErrorIs(t, err, collab.ErrNotFound)
}

func TestNotesAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	bob := srv.AddUser("bob", false)
	bc := clientAs(t, srv, bob.Token)
	project := srv.Seed.Project(srv.Admin, "Chatty", collab.PublicVisibility)
	pid := project.ID
	is, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Discuss"})
	require.NoError(t, err)
	srv.Seed.Branch(project, "feature")
	mrID := srv.Seed.MergeRequest(project, srv.Admin, "feature", "master", "Change").ID

	n, _, err := bc.Notes.CreateIssueNote(ctx, pid, is.ID, &collab.CreateNoteOptions{Body: "I can reproduce"})
	require.NoError(t, err)
	assert.Equal(t, "Issue", n.NoteableType)
	assert.Equal(t, "bob", n.Author.Username)
	mn, _, err := c.Notes.CreateMergeRequestNote(ctx, pid, mrID, &collab.CreateNoteOptions{Body: "LGTM"})
	require.NoError(t, err)
	assert.Equal(t, "MergeRequest", mn.NoteableType)

	_, _, err = c.Notes.UpdateIssueNote(ctx, pid, is.ID, n.ID, &collab.UpdateNoteOptions{Body: "admin may edit"})
	require.NoError(t, err)
	_, _, err = bc.Notes.UpdateMergeRequestNote(ctx, pid, mrID, mn.ID, &collab.UpdateNoteOptions{Body: "not mine"})
	assert.ErrorIs(t, err, collab.ErrForbidden)
	upd, _, err := bc.Notes.UpdateIssueNote(ctx, pid, is.ID, n.ID, &collab.UpdateNoteOptions{Body: "edited"})
	require.NoError(t, err)
	assert.Equal(t, "edited", upd.Body)
	got, _, err := c.Notes.GetIssueNote(ctx, pid, is.ID, n.ID)
	require.NoError(t, err)
	assert.Equal(t, "edited", got.Body)
	_, _, err = c.Notes.GetMergeRequestNote(ctx, pid, mrID, n.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound, "a note belongs to one noteable")
	_, _, err = c.Notes.CreateIssueNote(ctx, pid, 999999, &collab.CreateNoteOptions{Body: "nowhere"})
	assert.ErrorIs(t, err, collab.ErrNotFound)

	list, _, err := c.Notes.ListIssueNotes(ctx, pid, is.ID, nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	count := 0
	for _, err := range c.Notes.AllMergeRequestNotes(ctx, pid, mrID, nil) {
		require.NoError(t, err)
		count++
	}
	assert.Equal(t, 1, count)
	for _, err := range c.Notes.AllIssueNotes(ctx, pid, is.ID, nil) {
		require.NoError(t, err)
	}
	issue, _, err := c.Issues.Get(ctx, pid, is.ID)
	require.NoError(t, err)
	assert.Equal(t, 1, issue.UserNotesCount)

	events, _, err := c.Projects.ListEvents(ctx, pid, nil)
	require.NoError(t, err)
	assert.Equal(t, "commented on", events[0].ActionName)
	require.NotNil(t, events[0].Note)
	assert.Equal(t, "LGTM", events[0].Note.Body)

	_, err = bc.Notes.DeleteMergeRequestNote(ctx, pid, mrID, mn.ID)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	_, err = c.Notes.DeleteMergeRequestNote(ctx, pid, mrID, mn.ID)
	require.NoError(t, err)
	_, err = c.Notes.DeleteMergeRequestNote(ctx, pid, mrID, mn.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, err = bc.Notes.DeleteIssueNote(ctx, pid, is.ID, n.ID)
	require.NoError(t, err)
}
