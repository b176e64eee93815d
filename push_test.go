package collab

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPushDataRoundTrip(t *testing.T) {
	// The push payload of a webhook; a project event's data carries a subset.
	in := `{"object_kind":"push","event_name":"push","before":"4c1e0d52b7a9f3e8d6c2a1b0e9f8d7c6b5a49382",
	 "after":"a93f7e2c1d0b9a8f7e6d5c4b3a29180f7e6d5c4b","ref":"refs/heads/master","checkout_sha":null,"message":null,
	 "user_id":12,"user_name":"Dana","user_email":"dana@example.org","user_avatar":null,"project_id":31,
	 "project":{"name":"P","description":null,"web_url":"w","avatar_url":null,"git_ssh_url":"s","git_http_url":"h",
	   "namespace":"N","visibility_level":10,"path_with_namespace":"n/p","default_branch":null,"homepage":"w","url":"s",
	   "ssh_url":"s","http_url":"h","new_key":[1,2]},
	 "commits":[{"id":"a93f","message":"m\n","timestamp":"2016-06-20T17:42:11+02:00","url":"",
	   "author":{"name":"Dana","email":"dana@example.org"},"added":[],"modified":["lib/eta.rb"],"removed":[]}],
	 "total_commits_count":"1","repository":{"name":"P","url":"s","description":"d","homepage":"w",
	   "git_http_url":"h","git_ssh_url":"s","visibility_level":10}}`
	var d PushData
	require.NoError(t, json.Unmarshal([]byte(in), &d))
	assert.Equal(t, 1, d.TotalCommitsCount, "a count sent as a string still decodes")
	assert.Equal(t, []string{"lib/eta.rb"}, d.Commits[0].Modified)
	assert.Equal(t, VisibilityLevel(10), d.Project.VisibilityLevel)
	assert.JSONEq(t, `[1,2]`, string(d.Project.Extra["new_key"]))
	out, err := json.Marshal(d)
	require.NoError(t, err)
	want := strings.Replace(in, `"total_commits_count":"1"`, `"total_commits_count":1`, 1)
	assert.JSONEq(t, want, string(out), "every key comes back, with the count as a number")
}

func TestPushDataBuiltInCode(t *testing.T) {
	out, err := json.Marshal(&PushData{Ref: "refs/heads/main", Commits: []*PushCommit{{ID: "abc"}}})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m))
	assert.Contains(t, m, "checkout_sha", "a value built in code writes every field")
	commit := m["commits"].([]any)[0].(map[string]any)
	assert.Contains(t, commit, "added", "the file lists too, null when nil")
}

func TestPushDataBadField(t *testing.T) {
	var d PushData
	err := json.Unmarshal([]byte(`{"ref":"refs/heads/x","commits":[{"id":"a","timestamp":"2015-04-08T21: 00:25-07:00"}]}`), &d)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "commits[0].timestamp")
}

// TestPushDataEditIsWritten: a field set after decoding is encoded, and
// reads back.
func TestPushDataEditIsWritten(t *testing.T) {
	var d PushData
	require.NoError(t, json.Unmarshal([]byte(`{"ref":"refs/heads/master"}`), &d))
	d.UserName = "Priya Raman"
	out, err := json.Marshal(d)
	require.NoError(t, err)
	var again PushData
	require.NoError(t, json.Unmarshal(out, &again))
	assert.Equal(t, d, again)
	assert.Equal(t, "Priya Raman", again.UserName)
}
