package catchup_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/webhook"
	"github.com/collabsvc/collab/webhook/catchup"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A payload's shape: every path of a key (nested objects joined by ".",
// array elements as "[]") with the JSON types of its values.
type shape map[string]map[string]bool

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	}
	return "object"
}

// add records v at path, and everything below it.
func (s shape) add(path string, v any) {
	s.addType(path, jsonType(v))
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			s.add(path+"."+k, e)
		}
	case []any:
		for _, e := range v {
			s.add(path+"[]", e)
		}
	}
}

func shapeOf(t *testing.T, body []byte) shape {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(body, &v), "%s", body)
	s := shape{}
	for k, e := range v {
		s.add(k, e)
	}
	return s
}

// reference is what the 8.x payloads of one kind send: the union of their
// shapes, and the paths that every one of them sends.
type reference struct {
	files    []string
	union    shape
	everyone map[string]int // path -> number of files sending it
}

// group names the kind of a payload, with the noteable type for notes,
// whose sibling object differs.
func group(body map[string]any) string {
	kind, _ := body["object_kind"].(string)
	if attrs, ok := body["object_attributes"].(map[string]any); ok && kind == "note" {
		typ, _ := attrs["noteable_type"].(string)
		return kind + "/" + typ
	}
	return kind
}

// loadReferences reads the payloads of deployed 8.x servers: those
// testdata/payloads/index.tsv lists as 8.x, but for those its notes call
// mangled, and the examples of testdata/spec, read from the servers' code.
func loadReferences(t *testing.T) map[string]*reference {
	t.Helper()
	dir := filepath.Join("..", "testdata")
	files, err := filepath.Glob(filepath.Join(dir, "spec", "*.json"))
	require.NoError(t, err)
	f, err := os.Open(filepath.Join(dir, "payloads", "index.tsv"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) >= 7 && cols[4] == "8.x" && !strings.Contains(cols[6], "key-with-space") {
			files = append(files, filepath.Join(dir, "payloads", cols[0]))
		}
	}
	require.NoError(t, sc.Err())
	refs := map[string]*reference{}
	for _, file := range files {
		body, err := os.ReadFile(file)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(body, &m), file)
		g := group(m)
		if refs[g] == nil {
			refs[g] = &reference{union: shape{}, everyone: map[string]int{}}
		}
		r := refs[g]
		r.files = append(r.files, filepath.Base(file))
		for path, types := range shapeOf(t, body) {
			r.everyone[path]++
			for typ := range types {
				r.union.addType(path, typ)
			}
		}
	}
	return refs
}

// byName is the JSON types each key has in any reference, wherever it is:
// a column ("description", "milestone_id") has the same types in every
// object that carries it, though a few payloads show only some of them.
func byName(refs map[string]*reference) shape {
	names := shape{}
	for _, r := range refs {
		for path, types := range r.union {
			for typ := range types {
				names.addType(name(path), typ)
			}
		}
	}
	return names
}

// name is the last key of a path.
func name(path string) string {
	path = strings.TrimRight(path, "[]")
	return path[strings.LastIndex(path, ".")+1:]
}

func (s shape) addType(path, typ string) {
	if s[path] == nil {
		s[path] = map[string]bool{}
	}
	s[path][typ] = true
}

// nullable are the keys the servers send as null in some cases that the
// references above do not show (descriptions, due dates, avatars, a merge
// request's last commit and source, a pipeline's status): "Most ids,
// descriptions, avatar URLs, times, source and last_commit can be null".
var nullable = []string{"description", "due_date", "avatar_url", "last_commit", "source", "status"}

// checkShape compares a payload with the references of its kind: each key
// it sends is one a deployed server sends there, with a JSON type servers
// send for that key; and each key every reference sends is there, unless
// its parent is null or absent. allowNull lists the paths this payload may
// send as null where no server does.
func checkShape(t *testing.T, where string, body []byte, refs map[string]*reference, names shape, allowNull ...string) {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m))
	g := group(m)
	ref := refs[g]
	require.NotNil(t, ref, "%s: no 8.x payload of kind %q to compare with", where, g)
	got := shapeOf(t, body)
	for path, types := range got {
		if !assert.Contains(t, ref.union, path, "%s: key %s is not in any 8.x %s payload (%v)", where, path, g, ref.files) {
			continue
		}
		for typ := range types {
			null := typ == "null" && (slices.Contains(nullable, name(path)) || slices.Contains(allowNull, path))
			ok := ref.union[path][typ] || names[name(path)][typ] || null
			assert.True(t, ok, "%s: %s is %s; 8.x payloads send %v", where, path, typ, keys(names[name(path)]))
		}
	}
	for path, n := range ref.everyone {
		parent := path[:max(0, strings.LastIndexAny(path, ".["))]
		if n < len(ref.files) || strings.HasSuffix(path, "[]") || parent != "" && !got[parent]["object"] && !got[parent]["array"] {
			continue
		}
		assert.Contains(t, got, path, "%s: key %s, which every 8.x %s payload sends, is missing", where, path, g)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// bodies is a receiver that keeps the body of each delivery by kind.
type bodies struct {
	mu sync.Mutex
	m  map[string][][]byte
}

func (b *bodies) keep(kind string, body []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string][][]byte{}
	}
	b.m[kind] = append(b.m[kind], body)
}

func (b *bodies) all() map[string][][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m
}

// everyKind makes the fake server send every kind it delivers: pushes,
// issues, merge requests, notes on both, and builds; each change is made
// in its own second, so that catch-up sees each.
func everyKind(t *testing.T, ctx context.Context, srv *collabtest.Server, c *collab.Client, project *collab.Project) {
	pid := project.ID
	t.Helper()
	issue, _, err := c.Issues.Create(ctx, pid, &collab.CreateIssueOptions{Title: "Crash <on> save", AssigneeID: collab.Ptr(srv.AdminID)})
	require.NoError(t, err)
	_, err = srv.Push(pid, "feature", collabtest.PushCommit{Message: "Start", Added: []string{"a.go"}})
	require.NoError(t, err)
	mr, _, err := c.MergeRequests.Create(ctx, pid, &collab.CreateMergeRequestOptions{SourceBranch: "feature", TargetBranch: "master", Title: "Feature"})
	require.NoError(t, err)
	_, _, err = c.Notes.CreateIssueNote(ctx, pid, issue.ID, &collab.CreateNoteOptions{Body: "Seen it too."})
	require.NoError(t, err)
	_, _, err = c.Notes.CreateMergeRequestNote(ctx, pid, mr.ID, &collab.CreateNoteOptions{Body: "LGTM"})
	require.NoError(t, err)
	build := srv.Seed.Build(project, collabtest.BuildSpec{Name: "rspec", Ref: "feature"}).ID
	srv.SetBuildStatus(build, string(collab.BuildRunning))
	srv.SetBuildStatus(build, string(collab.BuildSuccess))
	_, _, err = c.Issues.Update(ctx, pid, issue.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)})
	require.NoError(t, err)
	require.NoError(t, srv.WaitIdle(ctx))
	require.NoError(t, srv.Err())
}

// TestPayloadShapes compares every kind the fake server delivers, and every
// event catch-up synthesizes, with the payloads of deployed 8.x servers:
// the keys, and the JSON type of each value.
func TestPayloadShapes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	refs := loadReferences(t)
	names := byName(refs)
	srv, c, project := newWebshop(t)
	pid := project.ID

	var delivered bodies
	url := receiveInto(t, &delivered)
	_, _, err := c.Hooks.Add(ctx, pid, &collab.AddHookOptions{URL: url, PushEvents: collab.Ptr(true), IssuesEvents: collab.Ptr(true),
		MergeRequestsEvents: collab.Ptr(true), NoteEvents: collab.Ptr(true), BuildEvents: collab.Ptr(true)})
	require.NoError(t, err)
	everyKind(t, ctx, srv, c, project)

	var synthesized bodies
	h, _, _ := runHandler(t, webhook.Options{OnDelivery: func(_ context.Context, d *webhook.Delivery) error {
		synthesized.keep(string(d.Kind), d.Body)
		return nil
	}})
	_, err = catchup.Run(ctx, h, c, catchup.Options{Projects: catchup.IDs(pid), Since: time.Now().Add(-time.Hour)})
	require.NoError(t, err)
	require.NoError(t, h.WaitIdle(ctx))

	kinds := []string{"Push Hook", "Issue Hook", "Merge Request Hook", "Note Hook", "Build Hook"}
	for _, src := range []struct {
		name      string
		got       map[string][][]byte
		allowNull []string
	}{
		{"delivered", delivered.all(), nil},
		// Catch-up cannot tell who acted on an issue or a merge request.
		{"synthesized", synthesized.all(), []string{"user"}},
	} {
		for _, kind := range kinds {
			require.NotEmpty(t, src.got[kind], "%s: no %s", src.name, kind)
			for i, body := range src.got[kind] {
				checkShape(t, fmt.Sprintf("%s %s #%d", src.name, kind, i), body, refs, names, src.allowNull...)
			}
		}
	}
}

// receiveInto starts a loopback receiver that keeps every delivery's body
// and answers 200, and returns its URL.
func receiveInto(t *testing.T, b *bodies) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		assert.NoError(t, err)
		b.keep(r.Header.Get(webhook.HeaderEvent), body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
