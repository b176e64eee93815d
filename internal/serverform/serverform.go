// Package serverform writes webhook events and API records as deployed 8.9
// servers send them. The fields are those of package webhook's event types
// and the root package's records; this package only applies the servers'
// format to their encoding. In webhook events: database times as
// "2016-06-21 09:14:07 UTC", keys the servers leave out when empty, null for
// an unknown user's names, and [] or {} for empty lists and merge params. In
// API answers: times as "2016-06-21T09:14:07.000Z", and the keys a variant of
// a record does not carry left out, and a project hook's flags as the strings
// "true" and "false". The fake server (collabtest) and
// catch-up (webhook/catchup) both encode with it, so that a field added to an
// event type or a record reaches both.
package serverform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/collabsvc/collab"
)

// APITime is the layout of times in API answers, in UTC; hookTime that of
// database times in webhook payloads.
const (
	APITime  = "2006-01-02T15:04:05.000Z"
	hookTime = "2006-01-02 15:04:05 MST"
)

// ZeroSHA stands for "no commit" in push and build payloads.
const ZeroSHA = "0000000000000000000000000000000000000000"

// Encode writes event, a value of one of package webhook's event types, in
// the servers' format.
func Encode(event any) ([]byte, error) {
	v, err := tree(event)
	if err != nil {
		return nil, err
	}
	root, ok := v.(object)
	if !ok {
		return nil, fmt.Errorf("serverform: an event encodes as an object, not %T", event)
	}
	kind, _ := root.get("object_kind").(string)
	var out bytes.Buffer
	write(&out, format(kind, "", root))
	return out.Bytes(), nil
}

// Answer writes record, a value of one of the root package's records, as the
// API answers with it, without the keys at the paths omit lists (object
// keys joined by ".", array elements as "[]").
func Answer(record any, omit ...string) (json.RawMessage, error) {
	v, err := tree(record)
	if err != nil {
		return nil, err
	}
	a := answerForm{omit: omit, textFlags: textFlags(record)}
	var out bytes.Buffer
	write(&out, a.apply("", v))
	return out.Bytes(), nil
}

// answerForm is the format of one answer.
type answerForm struct {
	omit []string
	// textFlags writes booleans as the strings "true" and "false".
	textFlags bool
}

// textFlags reports whether the servers write record's booleans as text:
// project hooks' flags, as the API documentation shows them.
func textFlags(record any) bool {
	switch record.(type) {
	case collab.ProjectHook, *collab.ProjectHook:
		return true
	}
	return false
}

func (a answerForm) apply(path string, v any) any {
	switch v := v.(type) {
	case object:
		out := make(object, 0, len(v))
		for _, f := range v {
			if p := join(path, f.key); !slices.Contains(a.omit, p) {
				out = append(out, field{f.key, a.apply(p, f.value)})
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = a.apply(path+"[]", e)
		}
		return out
	case string:
		if strings.HasSuffix(lastKey(path), "_at") {
			return reformat(v, APITime)
		}
	case bool:
		if a.textFlags {
			return strconv.FormatBool(v)
		}
	}
	return v
}

// Under is each of keys under prefix, for Answer's omit.
func Under(prefix string, keys ...string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = join(prefix, k)
	}
	return out
}

// tree encodes v and reads it back as a tree that keeps the order of keys.
func tree(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return parse(dec)
}

// The servers' format, by key path (object keys joined by ".", array
// elements as "[]"), as the reference payloads of 8.x servers show it.
var (
	// omitEmpty are left out when null, "" or empty.
	omitEmpty = []string{
		"assignee", "commit", "issue", "merge_request", "snippet",
		"object_attributes.url", "object_attributes.action", "issue.url", "issue.action",
		"merge_request.url", "merge_request.action",
		"object_attributes.in_progress_merge_commit_sha", "merge_request.in_progress_merge_commit_sha",
		"object_attributes.position", "object_attributes.original_position",
		"object_attributes.last_commit.added", "object_attributes.last_commit.modified",
		"object_attributes.last_commit.removed", "merge_request.last_commit.added",
		"merge_request.last_commit.modified", "merge_request.last_commit.removed",
	}
	// longRepository are the keys of the repository object that only push,
	// tag push and build payloads carry.
	longRepository = []string{"repository.git_http_url", "repository.git_ssh_url", "repository.visibility_level"}
	shortKinds     = []string{"issue", "merge_request", "note"}
	// nullWhenEmpty are written null for "": a user the server does not know.
	nullWhenEmpty = []string{"user.name", "user.username", "assignee.name", "assignee.username"}
	// emptyList and emptyObject are written [] and {} for null.
	emptyList   = []string{"commits", "commits[].added", "commits[].modified", "commits[].removed"}
	emptyObject = []string{"object_attributes.merge_params", "merge_request.merge_params"}
	// dbTimes are the keys of database times. Commit timestamps and due
	// dates keep the root package's format.
	dbTimes = []string{"created_at", "updated_at", "deleted_at", "locked_at", "started_at", "finished_at",
		"build_started_at", "build_finished_at"}
)

// format applies the servers' format to v, found at path in an event of
// kind; it reports false for a key left out.
func format(kind, path string, v any) any {
	switch v := v.(type) {
	case object:
		out := make(object, 0, len(v))
		for _, f := range v {
			p := join(path, f.key)
			if omitted(kind, p, f.value) {
				continue
			}
			out = append(out, field{f.key, format(kind, p, f.value)})
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = format(kind, path+"[]", e)
		}
		return out
	case nil:
		switch {
		case slices.Contains(emptyList, path):
			return []any{}
		case slices.Contains(emptyObject, path):
			return object{}
		}
	case string:
		if v == "" && slices.Contains(nullWhenEmpty, path) {
			return nil
		}
		if slices.Contains(dbTimes, lastKey(path)) {
			return reformat(v, hookTime)
		}
	}
	return v
}

func omitted(kind, path string, v any) bool {
	if slices.Contains(longRepository, path) && slices.Contains(shortKinds, kind) {
		return true
	}
	return slices.Contains(omitEmpty, path) && empty(v)
}

// LeftOut reports whether Encode may leave out the key at path of an event
// of kind (its object_kind): always, or when the value is empty.
func LeftOut(kind, path string) bool {
	return slices.Contains(longRepository, path) && slices.Contains(shortKinds, kind) || slices.Contains(omitEmpty, path)
}

func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case object:
		return len(v) == 0
	}
	return false
}

// reformat rewrites an RFC 3339 time in UTC with layout; any other text,
// such as a date, stays as it is.
func reformat(s, layout string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format(layout)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func lastKey(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			return path[i+1:]
		}
	}
	return path
}

// Project completes p with the older copies of its fields that payloads
// carry (homepage, url, ssh_url, http_url).
func Project(p collab.HookProject) *collab.HookProject {
	p.Homepage, p.URL, p.SSHURL, p.HTTPURL = p.WebURL, p.GitSSHURL, p.GitSSHURL, p.GitHTTPURL
	return &p
}

// Repository is the older description of p that payloads carry beside it.
func Repository(p *collab.HookProject) *collab.HookRepository {
	return &collab.HookRepository{
		Name: p.Name, URL: p.GitSSHURL, Description: p.Description, Homepage: p.WebURL,
		GitHTTPURL: p.GitHTTPURL, GitSSHURL: p.GitSSHURL, VisibilityLevel: p.VisibilityLevel,
	}
}

// IssueURL is the web page of an issue of the project at projectWebURL.
func IssueURL(projectWebURL string, iid int) string {
	return projectWebURL + "/issues/" + strconv.Itoa(iid)
}

// MergeRequestURL is the web page of a merge request.
func MergeRequestURL(projectWebURL string, iid int) string {
	return projectWebURL + "/merge_requests/" + strconv.Itoa(iid)
}

// NoteURL is the address of comment id on the page at target.
func NoteURL(target string, id int) string { return target + "#note_" + strconv.Itoa(id) }

// Str is s, or nil for "": the servers send null for an empty text column.
func Str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ID is id, or nil for 0: the servers send null for an unset reference.
func ID(id int) *int {
	if id == 0 {
		return nil
	}
	return &id
}

// Time is t as a record's time, nil for the zero time.
func Time(t time.Time) *collab.Time {
	if t.IsZero() {
		return nil
	}
	return &collab.Time{Time: t}
}
