package jsonkeep_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/jsonkeep"
	"github.com/collabsvc/collab/internal/jsonkeep/jsonkeeptest"
	"github.com/collabsvc/collab/webhook"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rootRecords are the root package's records, by name.
var rootRecords = map[string]reflect.Type{}

func init() {
	for _, v := range []any{
		collab.ApplicationSettings{}, collab.AwardEmoji{}, collab.Branch{}, collab.Build{}, collab.ClosingIssue{},
		collab.CompoundMetrics{}, collab.DeletedLabel{}, collab.Group{}, collab.Issue{}, collab.JobStats{}, collab.Label{},
		collab.Member{}, collab.MergeRequest{}, collab.MergeRequestCommit{}, collab.Milestone{}, collab.Note{},
		collab.ProcessMetrics{}, collab.Project{}, collab.ProjectEvent{}, collab.ProjectFile{}, collab.ProjectHook{},
		collab.ProjectShare{}, collab.QueueMetrics{},
	} {
		rootRecords[reflect.TypeOf(v).Name()] = reflect.TypeOf(v)
	}
}

// rootBodies returns the root package's test bodies of records, each with
// the name of its record: testdata/roundtrip/<Type>_<variant>.json, the unit
// tests' fixtures, and the server documentation's examples.
func rootBodies(t testing.TB) map[string]string {
	root := filepath.Join("..", "..", "testdata")
	bodies := map[string]string{
		"builds_build.json": "Build", "builds_list.json": "Build", "builds_erased.json": "Build", "builds_kept.json": "Build",
		"builds_retried.json": "Build", "issues_issue.json": "Issue", "merge_requests_mr.json": "MergeRequest",
		"projects_events.json": "ProjectEvent", "projects_project.json": "Project",
	}
	files, err := filepath.Glob(filepath.Join(root, "roundtrip", "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		name, _, _ := strings.Cut(filepath.Base(f), "_")
		bodies[filepath.Join("roundtrip", filepath.Base(f))] = strings.TrimSuffix(name, ".json")
	}
	index, err := os.Open(filepath.Join(root, "server-doc-examples", "index.tsv"))
	require.NoError(t, err)
	defer index.Close()
	sc := bufio.NewScanner(index)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) >= 8 && !strings.HasPrefix(cols[0], "#") && strings.HasPrefix(cols[7], "collab.") {
			bodies[filepath.Join("server-doc-examples", cols[0]+".json")] = strings.TrimPrefix(cols[7], "collab.")
		}
	}
	require.NoError(t, sc.Err())
	return bodies
}

// TestEncodeIsTheReference checks that Encode writes, byte for byte, what
// the first encoder (one json.Marshal per field) wrote, for every record of
// the root package's test data (records nested in them included), as read and with an unknown key in every
// object.
func TestEncodeIsTheReference(t *testing.T) {
	covered := map[string]bool{}
	for file, name := range rootBodies(t) {
		typ, ok := rootRecords[name]
		if !assert.True(t, ok, "%s: no record %s", file, name) {
			continue
		}
		covered[name] = true
		body, err := os.ReadFile(filepath.Join("..", "..", "testdata", file))
		require.NoError(t, err)
		var generic any
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		require.NoError(t, d.Decode(&generic), file)
		extended, err := json.Marshal(jsonkeeptest.WithKeyEverywhere(generic))
		require.NoError(t, err)
		for _, b := range [][]byte{body, extended} {
			items := []json.RawMessage{b}
			if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
				require.NoError(t, json.Unmarshal(b, &items), file)
			}
			for _, item := range items {
				rec := reflect.New(typ)
				_ = json.Unmarshal(item, rec.Interface()) // a value that does not fit is kept in Extra
				assertSameEncoding(t, file, rec.Interface())
			}
		}
	}
	for name := range rootRecords {
		assert.True(t, covered[name], "no test body for %s", name)
	}
}

// TestEncodeIsTheReferenceForEvents does the same for the webhook events of
// the webhook package's test payloads.
func TestEncodeIsTheReferenceForEvents(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "webhook", "testdata", "payloads", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	compared := 0
	for _, f := range files {
		body, err := os.ReadFile(f)
		require.NoError(t, err)
		ev, _ := webhook.ParsePayload(http.Header{}, body) // a value that does not fit is kept in Extra
		if ev == nil || reflect.TypeOf(ev).Kind() != reflect.Pointer || reflect.TypeOf(ev).Elem().Kind() != reflect.Struct {
			continue
		}
		assertSameEncoding(t, f, ev)
		compared++
	}
	assert.Greater(t, compared, 50, "events compared")
}

// secretRecord writes itself with its value redacted: the tag on its Extra
// has the records holding it call its MarshalJSON.
type secretRecord struct {
	Value string                     `json:"value"`
	Extra map[string]json.RawMessage `json:"-" jsonkeep:"marshal"`
}

func (s secretRecord) MarshalJSON() ([]byte, error) {
	s.Value = "[redacted]"
	return jsonkeep.Encode(&s)
}

// plainRecord writes itself as genrecords has records write themselves.
type plainRecord struct {
	Value string                     `json:"value"`
	Extra map[string]json.RawMessage `json:"-"`
}

func (p plainRecord) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&p) }

func TestNestedRecordTaggedMarshalWritesItself(t *testing.T) {
	type holder struct {
		One   secretRecord               `json:"one"`
		Ptr   *secretRecord              `json:"ptr"`
		List  []secretRecord             `json:"list"`
		Plain []*plainRecord             `json:"plain"`
		Extra map[string]json.RawMessage `json:"-"`
	}
	v := &holder{One: secretRecord{Value: "s1"}, Ptr: &secretRecord{Value: "s2"}, List: []secretRecord{{Value: "s3"}},
		Plain: []*plainRecord{{Value: "p"}, nil}}
	b, err := jsonkeep.Encode(v)
	require.NoError(t, err)
	assert.Equal(t, `{"one":{"value":"[redacted]"},"ptr":{"value":"[redacted]"},"list":[{"value":"[redacted]"}],"plain":[{"value":"p"},null]}`, string(b))
	assertSameEncoding(t, "holder", v)
}

func assertSameEncoding(t *testing.T, what string, v any) {
	t.Helper()
	want, wantErr := jsonkeep.ReferenceEncode(v)
	got, err := jsonkeep.Encode(v)
	if wantErr != nil || err != nil {
		require.EqualError(t, err, fmt.Sprint(wantErr), what)
	}
	require.Equal(t, string(want), string(got), what)
}

// TestEncodeWritesAsJSONMarshal checks the values the planned encoder
// writes itself against the reference: escapes, invalid UTF-8, numbers,
// nil and empty lists, and the errors of values json.Marshal refuses.
func TestEncodeWritesAsJSONMarshal(t *testing.T) {
	type inner struct {
		S     string                     `json:"s"`
		Extra map[string]json.RawMessage `json:"-"`
	}
	type odd struct {
		S     string                     `json:"s"`
		F64   float64                    `json:"f64"`
		F32   float32                    `json:"f32"`
		U     uint8                      `json:"u"`
		I     int64                      `json:"i"`
		B     bool                       `json:"b"`
		P     *int                       `json:"p"`
		L     []string                   `json:"l"`
		Bytes []byte                     `json:"bytes"`
		M     map[string]int             `json:"m"`
		N     json.Number                `json:"n"`
		R     json.RawMessage            `json:"r"`
		Any   any                        `json:"any"`
		Time  collab.Time                `json:"time"`
		In    inner                      `json:"in"`
		Extra map[string]json.RawMessage `json:"-"`
	}
	one := 1
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "tab\tnl\nbs\\ \b\f\r\x00\x1f\x7f", "\u2028\u2029 é 日本", "bad \xff\xfe utf8 \xe2\x80"} {
		for _, f := range []float64{0, 1, -1.5, 1e-7, 1e21, 123456789.125, math.SmallestNonzeroFloat64} {
			assertSameEncoding(t, s, &odd{S: s, F64: f, F32: float32(f), U: 200, I: -1 << 40, B: true, P: &one,
				L: []string{s, ""}, Bytes: []byte(s), M: map[string]int{s: 1}, N: "12.5", R: json.RawMessage(` { "a" : "<" } `),
				Any: s, In: inner{S: s}, Extra: map[string]json.RawMessage{"s": json.RawMessage(`1`), s + "k": json.RawMessage(`[1]`)}})
		}
	}
	assertSameEncoding(t, "zero", &odd{})
	assertSameEncoding(t, "empty list", &odd{L: []string{}})
	for _, f := range []float64{math.NaN(), math.Inf(1)} {
		_, err := jsonkeep.Encode(&odd{F64: f})
		assert.ErrorContains(t, err, "f64: json: unsupported value")
		assertSameEncoding(t, "nan", &odd{F64: f})
	}
}

// BenchmarkEncode writes an issue with the planned encoder and with the
// reference (one json.Marshal per field), side by side.
func BenchmarkEncode(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("..", "..", "testdata", "issues_issue.json"))
	require.NoError(b, err)
	var issue collab.Issue
	require.NoError(b, json.Unmarshal(body, &issue))
	for name, encode := range map[string]func(any) ([]byte, error){"planned": jsonkeep.Encode, "reference": jsonkeep.ReferenceEncode} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := encode(&issue); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
