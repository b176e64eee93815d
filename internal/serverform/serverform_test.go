package serverform

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type hookUser struct {
	Name     string  `json:"name"`
	Username string  `json:"username"`
	Avatar   *string `json:"avatar_url"`
}

type hookRepo struct {
	Name       string `json:"name"`
	GitSSHURL  string `json:"git_ssh_url"`
	GitHTTPURL string `json:"git_http_url"`
	Visibility int    `json:"visibility_level"`
}

type hookCommit struct {
	ID        string       `json:"id"`
	Timestamp *collab.Time `json:"timestamp"`
	Added     []string     `json:"added"`
}

type hookAttrs struct {
	Title      string       `json:"title"`
	CreatedAt  *collab.Time `json:"created_at"`
	DueDate    *collab.Time `json:"due_date"`
	URL        string       `json:"url"`
	LastCommit *hookCommit  `json:"last_commit"`
}

type hookEvent struct {
	ObjectKind       string       `json:"object_kind"`
	User             *hookUser    `json:"user"`
	Repository       *hookRepo    `json:"repository"`
	ObjectAttributes *hookAttrs   `json:"object_attributes"`
	Assignee         *hookUser    `json:"assignee"`
	Commits          []hookCommit `json:"commits"`
}

var (
	at   = time.Date(2016, 6, 21, 11, 14, 7, 500e6, time.FixedZone("", 2*3600))
	date = collab.Time{Time: time.Date(2016, 7, 1, 0, 0, 0, 0, time.UTC), DateOnly: true}
)

// Encode keeps the keys in their order and applies each rule: database
// times in UTC to the second, dates and commit times as they are, the short
// repository, keys left out when empty, null names, [] for null lists.
func TestEncodeWritesTheServersFormat(t *testing.T) {
	ev := hookEvent{
		ObjectKind: "merge_request", User: &hookUser{}, Repository: &hookRepo{Name: "p", GitSSHURL: "git@x:p.git"},
		ObjectAttributes: &hookAttrs{Title: "a<b", CreatedAt: &collab.Time{Time: at}, DueDate: &date,
			LastCommit: &hookCommit{ID: "c1", Timestamp: &collab.Time{Time: at}}},
	}
	b, err := Encode(ev)
	require.NoError(t, err)
	assert.Equal(t, `{"object_kind":"merge_request","user":{"name":null,"username":null,"avatar_url":null},`+
		`"repository":{"name":"p"},"object_attributes":{"title":"a\u003cb","created_at":"2016-06-21 09:14:07 UTC",`+
		`"due_date":"2016-07-01","last_commit":{"id":"c1","timestamp":"2016-06-21T11:14:07.5+02:00"}},"commits":[]}`,
		string(b))

	ev.ObjectKind, ev.Commits = "push", []hookCommit{{ID: "c2"}}
	ev.Assignee, ev.ObjectAttributes = &hookUser{Name: "Dana", Username: "dana"}, nil
	b, err = Encode(ev)
	require.NoError(t, err)
	assert.Equal(t, `{"object_kind":"push","user":{"name":null,"username":null,"avatar_url":null},`+
		`"repository":{"name":"p","git_ssh_url":"git@x:p.git","git_http_url":"","visibility_level":0},`+
		`"object_attributes":null,"assignee":{"name":"Dana","username":"dana","avatar_url":null},`+
		`"commits":[{"id":"c2","timestamp":null,"added":[]}]}`, string(b))

	assert.True(t, LeftOut("note", "repository.git_ssh_url"))
	assert.False(t, LeftOut("push", "repository.git_ssh_url"))
	assert.True(t, LeftOut("push", "assignee"), "when empty")
	assert.False(t, LeftOut("issue", "object_attributes.title"))
}

func TestEncodeRefusesWhatIsNotAnObject(t *testing.T) {
	_, err := Encode([]int{1})
	assert.ErrorContains(t, err, "an event encodes as an object")
	_, err = Encode(func() {})
	assert.Error(t, err)
}

type record struct {
	ID        int          `json:"id"`
	CreatedAt *collab.Time `json:"created_at"`
	DueDate   *collab.Time `json:"due_date"`
	Author    *hookUser    `json:"author"`
	List      []hookUser   `json:"list"`
}

// Answer writes API times with milliseconds in UTC and leaves out the
// paths named, nested ones included.
func TestAnswerWritesAPITimesAndLeavesOutVariantKeys(t *testing.T) {
	rec := record{ID: 1, CreatedAt: &collab.Time{Time: at}, DueDate: &date, Author: &hookUser{Name: "Dana"},
		List: []hookUser{{Name: "a"}}}
	b, err := Answer(rec, Under("author", "username", "avatar_url")...)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":1,"created_at":"2016-06-21T09:14:07.500Z","due_date":"2016-07-01",`+
		`"author":{"name":"Dana"},"list":[{"name":"a","username":"","avatar_url":null}]}`, string(b))
	b, err = Answer(rec, "list[].username", "author")
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":1,"created_at":"2016-06-21T09:14:07.500Z","due_date":"2016-07-01",`+
		`"list":[{"name":"a","avatar_url":null}]}`, string(b))
}

// Answer writes a project hook's flags as the strings "true" and "false",
// and no other record's.
func TestAnswerWritesHookFlagsAsText(t *testing.T) {
	b, err := Answer(&collab.ProjectHook{ID: 1, PushEvents: true})
	require.NoError(t, err)
	var hook map[string]any
	require.NoError(t, json.Unmarshal(b, &hook))
	assert.Equal(t, "true", hook["push_events"])
	assert.Equal(t, "false", hook["note_events"])
	b, err = Answer(collab.Note{System: true})
	require.NoError(t, err)
	var note map[string]any
	require.NoError(t, json.Unmarshal(b, &note))
	assert.Equal(t, true, note["system"])
}

func TestRecordHelpers(t *testing.T) {
	assert.Nil(t, Str(""))
	assert.Equal(t, "x", *Str("x"))
	assert.Nil(t, ID(0))
	assert.Equal(t, 3, *ID(3))
	assert.Nil(t, Time(time.Time{}))
	assert.Equal(t, at, Time(at).Time)
	p := Project(collab.HookProject{Name: "p", WebURL: "https://x/p", GitSSHURL: "git@x:p.git", GitHTTPURL: "https://x/p.git"})
	assert.Equal(t, [4]string{"https://x/p", "git@x:p.git", "git@x:p.git", "https://x/p.git"}, [4]string{p.Homepage, p.URL, p.SSHURL, p.HTTPURL})
	r := Repository(p)
	assert.Equal(t, collab.HookRepository{Name: "p", URL: "git@x:p.git", Homepage: "https://x/p", GitHTTPURL: "https://x/p.git",
		GitSSHURL: "git@x:p.git"}, *r)
	assert.Equal(t, "https://x/p/issues/2#note_9", NoteURL(IssueURL("https://x/p", 2), 9))
	assert.Equal(t, "https://x/p/merge_requests/4", MergeRequestURL("https://x/p", 4))
}
