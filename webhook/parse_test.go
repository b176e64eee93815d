package webhook

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func header(kind Kind) http.Header {
	h := http.Header{}
	if kind != "" {
		h.Set(HeaderEvent, string(kind))
	}
	return h
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// roundTrip re-encodes ev and fails the test if a key or value of body is
// lost, or if the encoding does not parse back to an equal event.
func roundTrip(t *testing.T, ev Event, body []byte) {
	t.Helper()
	out, err := json.Marshal(ev)
	require.NoError(t, err)
	assert.Empty(t, sameJSON(body, out), "re-encoding lost or changed something")
	again, _ := ParsePayload(header(ev.Kind()), out) // the same field errors, if any
	assert.Equal(t, ev, again, "decoding the encoding again")
}

func TestSpecExamples(t *testing.T) {
	cases := []struct {
		file string
		kind Kind
		want any
	}{
		{"spec/push.json", KindPush, &PushEvent{}},
		{"spec/tag_push.json", KindTagPush, &TagPushEvent{}},
		{"spec/issue.json", KindIssue, &IssueEvent{}},
		{"spec/merge_request.json", KindMergeRequest, &MergeRequestEvent{}},
		{"spec/note_snippet.json", KindNote, &NoteEvent{}},
		{"spec/note_commit.json", KindNote, &NoteEvent{}},
		{"spec/note_issue.json", KindNote, &NoteEvent{}},
		{"spec/note_merge_request.json", KindNote, &NoteEvent{}},
		{"spec/build.json", KindBuild, &BuildEvent{}},
		{"spec/wiki_page.json", KindWikiPage, &WikiPageEvent{}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			body := readFile(t, c.file)
			for _, h := range []http.Header{header(c.kind), header("")} {
				ev, err := ParsePayload(h, body)
				require.NoError(t, err)
				assert.IsType(t, c.want, ev)
				assert.Equal(t, c.kind, ev.Kind())
				roundTrip(t, ev, body)
				assertNoExtra(t, ev)
			}
		})
	}
}

// assertNoExtra fails when a key of a spec example found no field: every key
// the server sends has one.
func assertNoExtra(t *testing.T, v any) {
	t.Helper()
	extras := map[string]bool{}
	collectExtra(reflect.ValueOf(v), "$", extras)
	assert.Empty(t, extras, "keys without a field")
}

func collectExtra(v reflect.Value, path string, out map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			collectExtra(v.Elem(), path, out)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			collectExtra(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			switch {
			case !f.IsExported():
			case f.Name == "Extra":
				for k := range v.Field(i).Interface().(map[string]json.RawMessage) {
					out[path+"."+k] = true
				}
			default:
				collectExtra(v.Field(i), path+"."+f.Name, out)
			}
		}
	}
}

func TestSpecValues(t *testing.T) {
	ev, err := ParsePayload(header(KindIssue), readFile(t, "spec/issue.json"))
	require.NoError(t, err)
	issue := ev.(*IssueEvent)
	a := issue.ObjectAttributes
	assert.Equal(t, 58, a.IID)
	assert.Equal(t, IssueOpen, a.Action)
	assert.Equal(t, "2016-06-21T09:14:07Z", a.CreatedAt.UTC().Format("2006-01-02T15:04:05Z07:00"))
	assert.Equal(t, "2016-07-01", a.DueDate.Format("2006-01-02"))
	assert.Nil(t, a.MilestoneID)
	require.NotNil(t, a.AssigneeID)
	assert.Equal(t, 12, *a.AssigneeID)
	assert.Equal(t, "dwhitfield", issue.Assignee.Username)
	assert.Equal(t, "Acme Tools", issue.Project.Namespace)

	ev, err = ParsePayload(header(KindBuild), readFile(t, "spec/build.json"))
	require.NoError(t, err)
	build := ev.(*BuildEvent)
	assert.Equal(t, 83.517, *build.BuildDuration)
	assert.Equal(t, 3310, build.Pipeline.ID)
	assert.Nil(t, build.Pipeline.Duration)
	assert.Nil(t, build.Pipeline.FinishedAt)
	assert.Equal(t, "dana@example.org", *build.User.Email)

	ev, err = ParsePayload(header(KindPush), readFile(t, "spec/push.json"))
	require.NoError(t, err)
	push := ev.(*PushEvent)
	assert.Equal(t, "a93f7e2c1d0b9a8f7e6d5c4b3a29180f7e6d5c4b", *push.CheckoutSHA)
	assert.Equal(t, []string{"lib/eta.rb"}, push.Commits[0].Modified)
	assert.Empty(t, push.Commits[0].Added)
	assert.Equal(t, "https://avatars.example.org/u/12.png?s=80&d=identicon", *push.UserAvatar)

	ev, err = ParsePayload(header(KindMergeRequest), readFile(t, "spec/merge_request.json"))
	require.NoError(t, err)
	mr := ev.(*MergeRequestEvent)
	assert.Equal(t, MergeParams{"force_remove_source_branch": "1"}, mr.ObjectAttributes.MergeParams)
	assert.True(t, mr.ObjectAttributes.WorkInProgress)
	assert.Equal(t, "praman", mr.Assignee.Username)

	ev, err = ParsePayload(header(KindWikiPage), readFile(t, "spec/wiki_page.json"))
	require.NoError(t, err)
	wiki := ev.(*WikiPageEvent)
	assert.Equal(t, "Add deploy notes", *wiki.ObjectAttributes.Message)
	assert.Equal(t, "acme-tools/route-planner.wiki", wiki.Wiki.PathWithNamespace)
}

// TestVariants decodes the value variants a receiver must accept: every time
// layout, numbers as strings, and null wherever the server may send it.
func TestVariants(t *testing.T) {
	base := string(readFile(t, "spec/issue.json"))
	times := []string{
		"2016-06-21 09:14:07 UTC",   // database time, UTC instance
		"2016-06-21 11:14:07 +0200", // database time, instance in another zone
		"2016-06-21T09:14:07Z",      // older documentation examples
		"2016-06-21T11:14:07+02:00", // commit timestamps
		"2016-06-21T09:14:07.000Z",  // with fractional seconds
	}
	for _, ts := range times {
		t.Run(ts, func(t *testing.T) {
			body := strings.Replace(base, `"created_at":"2016-06-21 09:14:07 UTC"`, `"created_at":"`+ts+`"`, 1)
			require.Contains(t, body, ts)
			ev, err := ParsePayload(header(KindIssue), []byte(body))
			require.NoError(t, err)
			got := ev.(*IssueEvent).ObjectAttributes.CreatedAt
			assert.Equal(t, int64(1466500447), got.Unix())
			roundTrip(t, ev, []byte(body))
		})
	}
	t.Run("numbers as strings", func(t *testing.T) {
		body := strings.NewReplacer(`"id":4417`, `"id":"4417"`, `"iid":58`, `"iid":" 58"`, `"assignee_id":12`, `"assignee_id":"12"`,
			`"position":0`, `"position":""`, `"visibility_level":10`, `"visibility_level":"10"`, `"confidential":false`, `"confidential":"false"`).Replace(base)
		ev, err := ParsePayload(header(KindIssue), []byte(body))
		require.NoError(t, err)
		a := ev.(*IssueEvent).ObjectAttributes
		assert.Equal(t, 4417, a.ID)
		assert.Equal(t, 58, a.IID)
		assert.Equal(t, 12, *a.AssigneeID)
		assert.Equal(t, 10, int(ev.(*IssueEvent).Project.VisibilityLevel))
		roundTrip(t, ev, []byte(body))
	})
	t.Run("nulls", func(t *testing.T) {
		body := strings.NewReplacer(`"assignee_id":12`, `"assignee_id":null`, `"description":"Rounding looks wrong for trips > 1h."`, `"description":null`,
			`"due_date":"2016-07-01"`, `"due_date":null`, `"avatar_url":null`, `"avatar_url":null`, `"default_branch":"master"`, `"default_branch":null`).Replace(base)
		ev, err := ParsePayload(header(KindIssue), []byte(body))
		require.NoError(t, err)
		a := ev.(*IssueEvent).ObjectAttributes
		assert.Nil(t, a.AssigneeID)
		assert.Nil(t, a.Description)
		assert.Nil(t, a.DueDate)
		assert.Nil(t, ev.(*IssueEvent).Project.DefaultBranch)
		roundTrip(t, ev, []byte(body))
	})
	t.Run("build nulls", func(t *testing.T) {
		body := strings.NewReplacer(`"build_duration":83.517`, `"build_duration":null`, `"build_started_at":"2016-06-21 10:03:40 UTC"`, `"build_started_at":null`,
			`{"id":12,"name":"Dana Whitfield","email":"dana@example.org"}`, `{"id":null,"name":null,"email":null}`,
			`"message":"Fix rounding in ETA calculation\n"`, `"message":null`).Replace(string(readFile(t, "spec/build.json")))
		ev, err := ParsePayload(header(KindBuild), []byte(body))
		require.NoError(t, err)
		b := ev.(*BuildEvent)
		assert.Nil(t, b.BuildDuration)
		assert.Nil(t, b.User.ID)
		assert.Nil(t, b.Pipeline.Message)
		roundTrip(t, ev, []byte(body))
	})
	t.Run("merge request source gone", func(t *testing.T) {
		var m map[string]any
		require.NoError(t, json.Unmarshal(readFile(t, "spec/merge_request.json"), &m))
		attrs := m["object_attributes"].(map[string]any)
		attrs["source"], attrs["last_commit"], attrs["merge_params"] = nil, nil, map[string]any{}
		attrs["in_progress_merge_commit_sha"] = nil
		body, _ := json.Marshal(m)
		ev, err := ParsePayload(header(KindMergeRequest), body)
		require.NoError(t, err)
		a := ev.(*MergeRequestEvent).ObjectAttributes
		assert.Nil(t, a.Source)
		assert.Nil(t, a.LastCommit)
		assert.Empty(t, a.MergeParams)
		roundTrip(t, ev, body)
	})
}

func TestDecodeErrors(t *testing.T) {
	t.Run("not JSON", func(t *testing.T) {
		ev, err := ParsePayload(header(KindIssue), []byte(`{"object_kind":`))
		assert.Nil(t, ev)
		require.Error(t, err)
		var de *DecodeError
		assert.False(t, errors.As(err, &de))
	})
	t.Run("not an object", func(t *testing.T) {
		ev, err := ParsePayload(header(KindPush), []byte(`[1,2]`))
		assert.Nil(t, ev)
		assert.ErrorContains(t, err, "Push Hook")
	})
	t.Run("null", func(t *testing.T) {
		for _, kind := range []Kind{KindPush, KindNote, "Pipeline Hook", ""} {
			ev, err := ParsePayload(header(kind), []byte(" null\n"))
			assert.Nil(t, ev, kind)
			assert.Error(t, err, kind)
		}
	})
	t.Run("bad values keep the rest", func(t *testing.T) {
		body := strings.NewReplacer(`"iid":58`, `"iid":"fifty-eight"`, `"created_at":"2016-06-21 09:14:07 UTC"`, `"created_at":"yesterday"`,
			`"name":"Priya Raman"`, `"name":7`).Replace(string(readFile(t, "spec/issue.json")))
		ev, err := ParsePayload(header(KindIssue), []byte(body))
		var de *DecodeError
		require.ErrorAs(t, err, &de)
		var fields collab.FieldErrors
		require.ErrorAs(t, err, &fields, "the client's rule: FieldErrors with the value")
		assert.Equal(t, de.Fields, fields)
		var paths []string
		for _, f := range de.Fields {
			paths = append(paths, f.Path)
		}
		assert.Equal(t, []string{"object_attributes.created_at", "object_attributes.iid", "user.name"}, paths)
		assert.Contains(t, err.Error(), `"yesterday"`)
		issue := ev.(*IssueEvent)
		assert.Equal(t, "ETA off by one minute", issue.ObjectAttributes.Title)
		assert.Equal(t, "praman", issue.User.Username)
		assert.JSONEq(t, `"fifty-eight"`, string(issue.ObjectAttributes.Extra["iid"]))
		roundTrip(t, ev, []byte(body))
	})
	t.Run("bad element of a list", func(t *testing.T) {
		body := strings.Replace(string(readFile(t, "spec/push.json")), `"timestamp":"2016-06-20T17:42:11+02:00"`, `"timestamp":"2016-06-20T17: 42:11+02:00"`, 1)
		ev, err := ParsePayload(header(KindPush), []byte(body))
		assert.ErrorContains(t, err, "commits[0].timestamp")
		assert.Len(t, ev.(*PushEvent).Commits, 1)
		roundTrip(t, ev, []byte(body))
	})
}

func TestUnknownKinds(t *testing.T) {
	h := header("System Hook")
	h.Set(HeaderToken, "s3cret")
	h.Set("Authorization", "Basic dTpw")
	h.Set("X-Other", "kept")
	body := []byte(`{"event_name":"project_create"}`)
	ev, err := ParsePayload(h, body)
	require.NoError(t, err)
	raw := ev.(*RawEvent)
	assert.Equal(t, Kind("System Hook"), raw.Kind())
	assert.Equal(t, body, raw.Body)
	assert.Equal(t, "kept", raw.Header.Get("X-Other"))
	assert.Empty(t, raw.Header.Get(HeaderToken), "no secret is handed on")
	assert.Empty(t, raw.Header.Get("Authorization"))

	ev, err = ParsePayload(header(""), []byte(`{"object_kind":"pipeline"}`))
	require.NoError(t, err)
	assert.Equal(t, Kind("pipeline"), ev.Kind(), "without a header the object_kind names it")
	ev, err = ParsePayload(header("Job Hook"), []byte(`not even JSON`))
	require.NoError(t, err, "an unknown kind is never an error")
	assert.IsType(t, &RawEvent{}, ev)
}

// TestThirdPartyPayloads runs every payload of testdata/payloads (see its
// index.tsv): 8.x ones decode without loss, or with the faults the index
// notes reported by path and everything else kept; later ones never fail.
func TestThirdPartyPayloads(t *testing.T) {
	f, err := os.Open("testdata/payloads/index.tsv")
	require.NoError(t, err)
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	rows, err := r.ReadAll()
	require.NoError(t, err)
	require.Greater(t, len(rows), 70)
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for _, row := range rows[1:] {
		file, kind, era, notes := row[col["file"]], Kind(row[col["x_gitlab_event"]]), row[col["era"]], row[col["notes"]]
		t.Run(file, func(t *testing.T) {
			body := readFile(t, "payloads/"+file)
			ev, err := ParsePayload(header(kind), body)
			require.NotNil(t, ev, "err: %v", err)
			assert.Equal(t, kind, ev.Kind())
			var de *DecodeError
			if err != nil {
				require.ErrorAs(t, err, &de, "only field errors, never a failed payload")
			}
			if raw, ok := ev.(*RawEvent); ok {
				assert.Equal(t, body, raw.Body)
				if era == "8.x" {
					assert.Equal(t, "Pipeline Hook", string(kind), "the only 8.x kind without a type arrived in 8.11")
				}
				return
			}
			roundTrip(t, ev, body)
			faulty := strings.Contains(notes, "MALFORMED") || strings.Contains(notes, "key-with-space")
			switch {
			case era == "8.x" && !faulty:
				assert.NoError(t, err)
			case era == "8.x":
				require.Error(t, err, "the index notes a fault")
				for _, fe := range de.Fields {
					assert.True(t, errors.Is(fe, collab.ErrStrayKey) || strings.Contains(fe.Path, "timestamp"), "unexpected: %v", fe)
				}
			default:
				if err != nil {
					t.Logf("later-era payload, decoded with: %v", err)
				}
			}
		})
	}
}

func TestParseRequest(t *testing.T) {
	r := delivery(t, KindPush, "spec/push.json", "")
	ev, err := Parse(r)
	require.NoError(t, err)
	assert.Equal(t, "refs/heads/master", ev.(*PushEvent).Ref)

	big := delivery(t, KindPush, "spec/push.json", "")
	big.Body = readCloser(strings.Repeat(" ", DefaultMaxBodySize) + "{}")
	_, err = Parse(big)
	assert.ErrorIs(t, err, ErrBodyTooLarge)
}

func TestValidToken(t *testing.T) {
	h := http.Header{}
	assert.True(t, ValidToken(h, ""), "no token, none expected")
	assert.False(t, ValidToken(h, "s"), "no token, one expected")
	h.Set(HeaderToken, "s")
	assert.True(t, ValidToken(h, "s"))
	assert.False(t, ValidToken(h, "S"))
	assert.False(t, ValidToken(h, ""), "a token where none is configured")
	h.Set(HeaderToken, "")
	assert.False(t, ValidToken(h, "s"))
}

// TestLenientFlagsAsRecordsRead: an event reads a flag sent as 1 or "yes"
// as records do, with no field error.
func TestLenientFlagsAsRecordsRead(t *testing.T) {
	for _, flag := range []string{`1`, `"yes"`, `"true"`, `"on"`} {
		body := strings.Replace(string(readFile(t, "spec/issue.json")), `"confidential":false`, `"confidential":`+flag, 1)
		require.NotEqual(t, string(readFile(t, "spec/issue.json")), body, "the payload has the flag")
		ev, err := ParsePayload(header(KindIssue), []byte(body))
		require.NoError(t, err, flag)
		assert.True(t, ev.(*IssueEvent).ObjectAttributes.Confidential, flag)
	}
}

// TestEditedEventIsWritten: a field set on a decoded event is encoded, and
// reads back.
func TestEditedEventIsWritten(t *testing.T) {
	ev, err := ParsePayload(header(KindIssue), []byte(`{"object_kind":"issue","object_attributes":{"id":1}}`))
	require.NoError(t, err)
	issue := ev.(*IssueEvent)
	issue.ObjectAttributes.Title = "Renamed"
	issue.Assignee = &User{Username: "praman"}
	out, err := json.Marshal(issue)
	require.NoError(t, err)
	assert.Contains(t, string(out), `"title":"Renamed"`)
	again, err := ParsePayload(header(KindIssue), out)
	require.NoError(t, err)
	assert.Equal(t, issue, again, "the edits are written")
}
