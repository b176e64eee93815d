package collab_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
)

func TestAwardEmojiUnit(t *testing.T) {
	ctx := context.Background()
	awardJSON := `{"id": 4, "name": "1234", "user": {"name": "Administrator", "username": "root", "id": 1, "state": "active",
	  "avatar_url": "http://www.gravatar.com/avatar/e64c7d89f26bd1972efa854d13d7dd61?s=80&d=identicon", "web_url": "http://localhost:3000/root"},
	  "created_at": "2016-06-15T10:09:34.197Z", "updated_at": "2016-06-15T10:09:34.197Z", "awardable_id": 80, "awardable_type": "Issue"}`
	want := &collab.AwardEmoji{ID: 4, Name: "1234", User: &collab.User{Name: "Administrator", Username: "root", ID: 1, State: "active",
		AvatarURL: collab.Ptr("http://www.gravatar.com/avatar/e64c7d89f26bd1972efa854d13d7dd61?s=80&d=identicon"), WebURL: "http://localhost:3000/root"},
		CreatedAt: ts("2016-06-15T10:09:34.197Z"), UpdatedAt: ts("2016-06-15T10:09:34.197Z"), AwardableID: 80, AwardableType: "Issue"}
	c, m := newMockClient(t)
	type api struct {
		prefix string
		list   func() ([]*collab.AwardEmoji, *collab.Response, error)
		get    func() (*collab.AwardEmoji, *collab.Response, error)
		create func(name string) (*collab.AwardEmoji, *collab.Response, error)
		del    func() (*collab.AwardEmoji, *collab.Response, error)
	}
	a := c.AwardEmoji
	lo := &collab.ListOptions{Page: 1}
	for _, x := range []api{
		{"projects/g%2Fp/issues/80/award_emoji", func() ([]*collab.AwardEmoji, *collab.Response, error) { return a.ListIssueAwards(ctx, "g/p", 80, lo) },
			func() (*collab.AwardEmoji, *collab.Response, error) { return a.GetIssueAward(ctx, "g/p", 80, 4) },
			func(n string) (*collab.AwardEmoji, *collab.Response, error) {
				return a.CreateIssueAward(ctx, "g/p", 80, n)
			},
			func() (*collab.AwardEmoji, *collab.Response, error) { return a.DeleteIssueAward(ctx, "g/p", 80, 4) }},
		{"projects/g%2Fp/merge_requests/81/award_emoji", func() ([]*collab.AwardEmoji, *collab.Response, error) {
			return a.ListMergeRequestAwards(ctx, "g/p", 81, lo)
		},
			func() (*collab.AwardEmoji, *collab.Response, error) { return a.GetMergeRequestAward(ctx, "g/p", 81, 4) },
			func(n string) (*collab.AwardEmoji, *collab.Response, error) {
				return a.CreateMergeRequestAward(ctx, "g/p", 81, n)
			},
			func() (*collab.AwardEmoji, *collab.Response, error) {
				return a.DeleteMergeRequestAward(ctx, "g/p", 81, 4)
			}},
		{"projects/g%2Fp/issues/80/notes/7/award_emoji", func() ([]*collab.AwardEmoji, *collab.Response, error) {
			return a.ListIssueNoteAwards(ctx, "g/p", 80, 7, lo)
		},
			func() (*collab.AwardEmoji, *collab.Response, error) { return a.GetIssueNoteAward(ctx, "g/p", 80, 7, 4) },
			func(n string) (*collab.AwardEmoji, *collab.Response, error) {
				return a.CreateIssueNoteAward(ctx, "g/p", 80, 7, n)
			},
			func() (*collab.AwardEmoji, *collab.Response, error) {
				return a.DeleteIssueNoteAward(ctx, "g/p", 80, 7, 4)
			}},
		{"projects/g%2Fp/merge_requests/81/notes/7/award_emoji", func() ([]*collab.AwardEmoji, *collab.Response, error) {
			return a.ListMergeRequestNoteAwards(ctx, "g/p", 81, 7, lo)
		},
			func() (*collab.AwardEmoji, *collab.Response, error) {
				return a.GetMergeRequestNoteAward(ctx, "g/p", 81, 7, 4)
			},
			func(n string) (*collab.AwardEmoji, *collab.Response, error) {
				return a.CreateMergeRequestNoteAward(ctx, "g/p", 81, 7, n)
			},
			func() (*collab.AwardEmoji, *collab.Response, error) {
				return a.DeleteMergeRequestNoteAward(ctx, "g/p", 81, 7, 4)
			}},
	} {
		m.Reply(200, "["+awardJSON+"]")
		list, _, err := x.list()
		require.NoError(t, err)
		m.AssertRequest("GET", x.prefix, url.Values{"page": {"1"}})
		assert.Equal(t, []*collab.AwardEmoji{want}, list)
		m.Reply(200, awardJSON)
		got, _, err := x.get()
		require.NoError(t, err)
		m.AssertRequest("GET", x.prefix+"/4", nil)
		assert.Equal(t, want, got)
		m.Reply(201, awardJSON)
		_, _, err = x.create("blowfish")
		require.NoError(t, err)
		m.AssertRequest("POST", x.prefix, url.Values{"name": {"blowfish"}})
		m.Reply(200, awardJSON)
		_, _, err = x.del()
		require.NoError(t, err)
		m.AssertRequest("DELETE", x.prefix+"/4", nil)
		m.Reply(401, `{"message":"401 Unauthorized"}`)
		_, _, err = x.del()
		assert.ErrorIs(t, err, collab.ErrUnauthorized)
		before := m.Count()
		for _, bad := range []string{"", ":blowfish:", "thumbs:up"} {
			_, _, err = x.create(bad)
			assert.Error(t, err)
		}
		assert.Equal(t, before, m.Count(), "names with colons never leave the client")
	}
	before := m.Count()
	_, _, err := a.GetIssueAward(ctx, 1, 2, 0)
	assert.Error(t, err)
	_, _, err = a.DeleteMergeRequestNoteAward(ctx, 1, 2, 3, 0)
	assert.Error(t, err)
	_, _, err = a.CreateIssueNoteAward(ctx, 1, 2, 0, "smile")
	assert.Error(t, err, "a note award needs a note id")
	assert.Equal(t, before, m.Count())
}

func TestAwardEmojiAgainstFake(t *testing.T) {
	ctx := context.Background()
	c, srv := newFakeClient(t)
	bob := srv.AddUser("bob", false)
	bc := clientAs(t, srv, bob.Token)
	project := srv.Seed.Project(srv.Admin, "Emoji", collab.PublicVisibility)
	pid := project.ID
	issueRecord := srv.Seed.Issue(project, srv.Admin, "Party")
	issueID := issueRecord.ID
	srv.Seed.Branch(project, "x")
	mrRecord := srv.Seed.MergeRequest(project, srv.Admin, "x", "master", "Change")
	mrID := mrRecord.ID
	noteID := srv.Seed.IssueNote(issueRecord, srv.Admin, "Nice").ID
	mrNote := srv.Seed.MergeRequestNote(mrRecord, srv.Admin, "Nice MR").ID

	aw, _, err := bc.AwardEmoji.CreateIssueAward(ctx, pid, issueID, "thumbsup")
	require.NoError(t, err)
	assert.Equal(t, "Issue", aw.AwardableType)
	assert.Equal(t, issueID, aw.AwardableID)
	_, _, err = bc.AwardEmoji.CreateIssueAward(ctx, pid, issueID, "thumbsup")
	assert.ErrorIs(t, err, collab.ErrNotFound, "a duplicate is 404")
	_, _, err = bc.AwardEmoji.CreateIssueAward(ctx, pid, issueID, "not_an_emoji")
	assert.ErrorIs(t, err, collab.ErrNotFound)
	is, _, err := c.Issues.Get(ctx, pid, issueID)
	require.NoError(t, err)
	assert.Equal(t, 1, is.Upvotes)

	mrAward, _, err := c.AwardEmoji.CreateMergeRequestAward(ctx, pid, mrID, "thumbsdown")
	require.NoError(t, err)
	assert.Equal(t, "MergeRequest", mrAward.AwardableType)
	mr, _, err := c.MergeRequests.Get(ctx, pid, mrID)
	require.NoError(t, err)
	assert.Equal(t, 1, mr.Downvotes)
	na, _, err := bc.AwardEmoji.CreateIssueNoteAward(ctx, pid, issueID, noteID, "tada")
	require.NoError(t, err)
	assert.Equal(t, "Note", na.AwardableType)
	mna, _, err := bc.AwardEmoji.CreateMergeRequestNoteAward(ctx, pid, mrID, mrNote, "rocket")
	require.NoError(t, err)

	list, _, err := c.AwardEmoji.ListIssueAwards(ctx, pid, issueID, nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	got, _, err := c.AwardEmoji.GetIssueNoteAward(ctx, pid, issueID, noteID, na.ID)
	require.NoError(t, err)
	assert.Equal(t, "tada", got.Name)
	_, _, err = c.AwardEmoji.GetMergeRequestAward(ctx, pid, mrID, na.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound, "an award belongs to one awardable")
	_, _, err = c.AwardEmoji.GetMergeRequestNoteAward(ctx, pid, mrID, mrNote, mna.ID)
	require.NoError(t, err)
	for _, seq := range []func(func(*collab.AwardEmoji, error) bool){
		c.AwardEmoji.AllIssueAwards(ctx, pid, issueID, nil), c.AwardEmoji.AllMergeRequestAwards(ctx, pid, mrID, nil),
		c.AwardEmoji.AllIssueNoteAwards(ctx, pid, issueID, noteID, nil), c.AwardEmoji.AllMergeRequestNoteAwards(ctx, pid, mrID, mrNote, nil),
	} {
		n := 0
		for _, err := range seq {
			require.NoError(t, err)
			n++
		}
		assert.Equal(t, 1, n)
	}
	_, _, err = bc.AwardEmoji.DeleteMergeRequestAward(ctx, pid, mrID, mrAward.ID)
	assert.ErrorIs(t, err, collab.ErrUnauthorized, "only the author or an admin")
	_, _, err = c.AwardEmoji.DeleteIssueAward(ctx, pid, issueID, aw.ID)
	require.NoError(t, err, "an admin may")
	_, _, err = bc.AwardEmoji.DeleteIssueNoteAward(ctx, pid, issueID, noteID, na.ID)
	require.NoError(t, err, "the author may")
	_, _, err = bc.AwardEmoji.DeleteMergeRequestNoteAward(ctx, pid, mrID, mrNote, mna.ID)
	require.NoError(t, err)
	_, _, err = bc.AwardEmoji.DeleteIssueNoteAward(ctx, pid, issueID, noteID, na.ID)
	assert.ErrorIs(t, err, collab.ErrNotFound)
}
