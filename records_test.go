package collab

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serverKey is one key that deployed servers send in a record beyond the
// documented fields. The key is checked by decoding a response of record via
// (a key of recordTypes) that holds the key, with value, at path (dot
// separated; a trailing "[]" is a one-element array), and encoding it again.
type serverKey struct {
	typ   string // the Go record type that holds the key
	key   string
	via   string // the response record decoded
	path  string
	value string // JSON
	// push marks keys of push event data, checked through ProjectEvent only,
	// so that the test does not depend on the push data type's name.
	push bool
}

const briefPushProject = `{"name":"Diaspora","description":"","web_url":"http://example.com/mike/diaspora",
	"avatar_url":null,"git_ssh_url":"git@example.com:mike/diaspora.git","git_http_url":"http://example.com/mike/diaspora.git",
	"namespace":"Mike","visibility_level":20,"path_with_namespace":"mike/diaspora","default_branch":"master",
	"homepage":"http://example.com/mike/diaspora","url":"git@example.com:mike/diaspora.git",
	"ssh_url":"git@example.com:mike/diaspora.git","http_url":"http://example.com/mike/diaspora.git"}`

// serverKeys lists every key that 8.9 and 8.10 servers send in the records
// of this package beyond the documented fields.
var serverKeys = []serverKey{
	{typ: "Branch", key: "developers_can_push", via: "Branch", value: `true`},
	{typ: "Branch", key: "developers_can_merge", via: "Branch", value: `true`},
	{typ: "BranchCommit", key: "parent_ids", via: "Branch", path: "commit", value: `["4ad91d3c1144c406e50c7b33bae684bd6837faf8"]`},
	{typ: "BranchCommit", key: "author_name", via: "Branch", path: "commit", value: `"John Smith"`},
	{typ: "BranchCommit", key: "author_email", via: "Branch", path: "commit", value: `"john@example.com"`},
	{typ: "BranchCommit", key: "committer_name", via: "Branch", path: "commit", value: `"Jane Roe"`},
	{typ: "BranchCommit", key: "committer_email", via: "Branch", path: "commit", value: `"jane@example.com"`},

	{typ: "User", key: "username", via: "Project", path: "owner", value: `"root"`},
	{typ: "User", key: "state", via: "Project", path: "owner", value: `"active"`},
	{typ: "User", key: "avatar_url", via: "Project", path: "owner", value: `"http://example.com/a.png"`},
	{typ: "User", key: "web_url", via: "Project", path: "owner", value: `"http://example.com/u/root"`},
	{typ: "ForkedFromProject", key: "http_url_to_repo", via: "Project", path: "forked_from_project", value: `"http://example.com/a/b.git"`},
	{typ: "ForkedFromProject", key: "web_url", via: "Project", path: "forked_from_project", value: `"http://example.com/a/b"`},

	{typ: "ProjectNamespace", key: "owner_id", via: "Project", path: "namespace", value: `7`},
	{typ: "ProjectNamespace", key: "created_at", via: "Project", path: "namespace", value: `"2016-06-17T07:47:24.216Z"`},
	{typ: "ProjectNamespace", key: "updated_at", via: "Project", path: "namespace", value: `"2016-06-18T07:47:24.216Z"`},
	{typ: "ProjectNamespace", key: "avatar", via: "Project", path: "namespace", value: `{"url":"/uploads/group/avatar/4/t.png"}`},
	{typ: "ProjectNamespace", key: "share_with_group_lock", via: "Project", path: "namespace", value: `true`},
	{typ: "ProjectNamespace", key: "request_access_enabled", via: "Project", path: "namespace", value: `true`},
	{typ: "Group", key: "owner_id", via: "Group", value: `7`},
	{typ: "Group", key: "created_at", via: "Group", value: `"2016-06-17T07:47:24.216Z"`},
	{typ: "Group", key: "updated_at", via: "Group", value: `"2016-06-18T07:47:24.216Z"`},
	{typ: "Group", key: "avatar", via: "Group", value: `{"url":"/uploads/group/avatar/4/t.png"}`},
	{typ: "Group", key: "share_with_group_lock", via: "Group", value: `true`},
	{typ: "Group", key: "request_access_enabled", via: "Group", value: `true`},
	{typ: "Group", key: "shared_projects", via: "Group", value: `[{"id":8,"name":"Html5 Boilerplate","path":"html5-boilerplate"}]`},

	{typ: "Member", key: "avatar_url", via: "Member", value: `"http://example.com/a.png"`},
	{typ: "Member", key: "web_url", via: "Member", value: `"http://example.com/u/root"`},
	{typ: "DeletedLabel", key: "priority", via: "DeletedLabel", value: `3`},
	{typ: "BuildUser", key: "location", via: "Build", path: "user", value: `"Kyiv"`},

	{typ: "Note", key: "updated_at", via: "ProjectEvent", path: "note", value: `"2015-12-04T10:33:56.698Z"`},
	{typ: "Note", key: "upvote?", via: "ProjectEvent", path: "note", value: `true`},
	{typ: "Note", key: "downvote?", via: "ProjectEvent", path: "note", value: `true`},
	{typ: "Note", key: "upvote", via: "ProjectEvent", path: "note", value: `true`},
	{typ: "Note", key: "downvote", via: "ProjectEvent", path: "note", value: `true`},

	{typ: "push data", key: "object_kind", via: "ProjectEvent", path: "data", value: `"push"`, push: true},
	{typ: "push data", key: "event_name", via: "ProjectEvent", path: "data", value: `"push"`, push: true},
	{typ: "push data", key: "checkout_sha", via: "ProjectEvent", path: "data", value: `"da1560886d4f094c3e6c9ef40349f7d38b5d27d7"`, push: true},
	{typ: "push data", key: "message", via: "ProjectEvent", path: "data", value: `"tag message"`, push: true},
	{typ: "push data", key: "user_email", via: "ProjectEvent", path: "data", value: `"john@example.com"`, push: true},
	{typ: "push data", key: "user_avatar", via: "ProjectEvent", path: "data", value: `"https://s.gravatar.com/avatar/d4c7?s=80"`, push: true},
	{typ: "push data", key: "project_id", via: "ProjectEvent", path: "data", value: `15`, push: true},
	{typ: "push data", key: "project", via: "ProjectEvent", path: "data", value: briefPushProject, push: true},
	{typ: "push commit", key: "added", via: "ProjectEvent", path: "data.commits[]", value: `["CHANGELOG"]`, push: true},
	{typ: "push commit", key: "modified", via: "ProjectEvent", path: "data.commits[]", value: `["app/a.rb"]`, push: true},
	{typ: "push commit", key: "removed", via: "ProjectEvent", path: "data.commits[]", value: `["old.txt"]`, push: true},
	{typ: "push repository", key: "git_http_url", via: "ProjectEvent", path: "data.repository", value: `"http://example.com/mike/diaspora.git"`, push: true},
	{typ: "push repository", key: "git_ssh_url", via: "ProjectEvent", path: "data.repository", value: `"git@example.com:mike/diaspora.git"`, push: true},
	{typ: "push repository", key: "visibility_level", via: "ProjectEvent", path: "data.repository", value: `20`, push: true},
}

// TestRecordsKeepServerKeys proves that no record drops a key deployed
// servers send: each key, alone in a response, survives a decode and an
// encode with its value.
func TestRecordsKeepServerKeys(t *testing.T) {
	for _, k := range serverKeys {
		t.Run(k.typ+"/"+k.key, func(t *testing.T) {
			if k.push {
				skipUntilPushData(t)
			}
			check, ok := recordTypes["collab."+k.via]
			require.True(t, ok, "no record %s", k.via)
			body, err := json.Marshal(nest(k.path, map[string]json.RawMessage{k.key: json.RawMessage(k.value)}))
			require.NoError(t, err)
			check(t, body)
		})
	}
}

// nest wraps leaf in the objects (and one-element arrays) path names.
func nest(path string, leaf any) any {
	if path == "" {
		return leaf
	}
	parts := strings.Split(path, ".")
	v := leaf
	for i := len(parts) - 1; i >= 0; i-- {
		name, isArray := strings.CutSuffix(parts[i], "[]")
		if isArray {
			v = []any{v}
		}
		v = map[string]any{name: v}
	}
	return v
}

// TestKeysLost shows that the round trip's comparison catches each kind of
// loss and accepts only the canonical equalities it documents.
func TestKeysLost(t *testing.T) {
	cases := []struct {
		name, in, out string
		lost          bool
	}{
		{"same", `{"a":1,"b":[{"c":"x"}]}`, `{"b":[{"c":"x"}],"a":1}`, false},
		{"extra key in output", `{"a":1}`, `{"a":1,"z":null}`, false},
		{"key dropped", `{"a":1,"b":2}`, `{"a":1}`, true},
		{"nested key dropped", `{"a":{"b":{"c":1}}}`, `{"a":{"b":{}}}`, true},
		{"key in array element dropped", `[{"a":1},{"a":2}]`, `[{"a":1},{}]`, true},
		{"array shortened", `{"a":[1,2]}`, `{"a":[1]}`, true},
		{"value changed", `{"a":"x"}`, `{"a":"y"}`, true},
		{"null became empty string", `{"a":null}`, `{"a":""}`, true},
		{"null became zero", `{"a":null}`, `{"a":0}`, true},
		{"null became false", `{"a":null}`, `{"a":false}`, true},
		{"empty array became null", `{"a":[]}`, `{"a":null}`, true},
		{"object became null", `{"a":{"b":1}}`, `{"a":null}`, true},
		{"number and its string", `{"a":"5"}`, `{"a":5}`, false},
		{"number and another string", `{"a":"6"}`, `{"a":5}`, true},
		{"number and a word", `{"a":"five"}`, `{"a":5}`, true},
		{"integral float", `{"a":1.0}`, `{"a":1}`, false},
		{"different float", `{"a":1.25}`, `{"a":1.5}`, true},
		{"bool and its string", `{"a":"true"}`, `{"a":true}`, false},
		{"bool and the opposite string", `{"a":"false"}`, `{"a":true}`, true},
		{"time as date and instant", `{"a":"2016-07-01"}`, `{"a":"2016-07-01T00:00:00Z"}`, false},
		{"time in another zone, same instant", `{"a":"2012-06-27T05:51:39-07:00"}`, `{"a":"2012-06-27T12:51:39Z"}`, false},
		{"time of another instant", `{"a":"2016-07-01"}`, `{"a":"2016-07-02T00:00:00Z"}`, true},
		{"string that is no time", `{"a":"abc"}`, `{"a":"abd"}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			diffs := keysLost(mustDecodeAny(t, []byte(tc.in)), mustDecodeAny(t, []byte(tc.out)), "$")
			if tc.lost {
				assert.NotEmpty(t, diffs)
			} else {
				assert.Empty(t, diffs)
			}
		})
	}
}
