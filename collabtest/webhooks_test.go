package collabtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/collabsvc/collab/internal/serverform"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// received is one request a test receiver got.
type received struct {
	header http.Header
	body   string
	path   string
}

// receiver is a hook endpoint that records every request and answers with
// answer(n), n counting requests from 1.
type receiver struct {
	*httptest.Server
	mu  sync.Mutex
	got []received
}

func newReceiver(t *testing.T, useTLS bool, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{header: r.Header.Clone(), body: string(b), path: r.URL.RequestURI()})
		n := len(rc.got)
		rc.mu.Unlock()
		if answer != nil {
			answer(n, w, r)
		}
	})
	if useTLS {
		rc.Server = httptest.NewTLSServer(h)
	} else {
		rc.Server = httptest.NewServer(h)
	}
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// hangUntilGone never answers: the sender's read timeout (or Close) ends it.
func hangUntilGone(_ int, _ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// waitCtx bounds a Wait helper so that a broken test fails instead of hanging.
func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func newTestDeliverer(t *testing.T) *deliverer {
	d := newDeliverer(nil)
	t.Cleanup(d.close)
	return d
}

func testJob(hookID int, url, body string) hookJob {
	return hookJob{hookID: hookID, projectID: 7, url: url, event: "Issue Hook", body: []byte(body), verifyTLS: true}
}

func (d *deliverer) waitCount(t *testing.T, n int) []Delivery {
	t.Helper()
	require.NoError(t, d.waitFor(waitCtx(t), func() bool { return len(d.done) >= n }))
	return d.deliveries()
}

func (d *deliverer) waitIdle(t *testing.T) []Delivery {
	t.Helper()
	require.NoError(t, d.waitFor(waitCtx(t), func() bool { return d.busy == 0 }))
	return d.deliveries()
}

func TestDeliveryHeadersAndBody(t *testing.T) {
	rc := newReceiver(t, false, nil)
	d := newTestDeliverer(t)
	d.tokens[3] = "s3cret token"
	d.enqueue(testJob(3, rc.URL+"/hook?x=1", `{"a":"b"}`))
	d.enqueue(testJob(4, rc.URL+"/hook", `{}`))
	got := d.waitIdle(t)
	require.Len(t, got, 2)
	for _, del := range got {
		assert.Equal(t, 200, del.Status)
		assert.Empty(t, del.Err)
		assert.Equal(t, 1, del.Attempt)
		assert.False(t, del.Duplicate)
		assert.Equal(t, 7, del.ProjectID)
		assert.Equal(t, "Issue Hook", del.Event)
	}
	reqs := rc.requests()
	require.Len(t, reqs, 2)
	byPath := map[string]received{}
	for _, r := range reqs {
		byPath[r.path] = r
		assert.Equal(t, []string{"application/json"}, r.header["Content-Type"])
		assert.Equal(t, []string{"Issue Hook"}, r.header["X-Gitlab-Event"])
	}
	assert.Equal(t, []string{"s3cret token"}, byPath["/hook?x=1"].header["X-Gitlab-Token"], "the query string is kept")
	assert.Equal(t, `{"a":"b"}`, byPath["/hook?x=1"].body)
	_, present := byPath["/hook"].header["X-Gitlab-Token"]
	assert.False(t, present, "no token header without a token")
}

func TestDeliveryBlankTokenIsNotSent(t *testing.T) {
	rc := newReceiver(t, false, nil)
	d := newTestDeliverer(t)
	d.tokens[1] = "  "
	d.enqueue(testJob(1, rc.URL, `{}`))
	d.waitIdle(t)
	_, present := rc.requests()[0].header["X-Gitlab-Token"]
	assert.False(t, present)
}

func TestDeliveryMovesURLCredentialsToBasicAuth(t *testing.T) {
	rc := newReceiver(t, false, nil)
	d := newTestDeliverer(t)
	url := "http://bot:p%40ss@" + rc.Listener.Addr().String() + "/in"
	d.enqueue(testJob(1, url, `{}`))
	got := d.waitIdle(t)
	assert.Equal(t, url, got[0].URL, "the hook URL as registered")
	r := rc.requests()[0]
	req := &http.Request{Header: r.header}
	user, pass, ok := req.BasicAuth()
	require.True(t, ok)
	assert.Equal(t, "bot", user)
	assert.Equal(t, "p@ss", pass)
	assert.Equal(t, "/in", r.path)
}

func TestDeliveryInOrderPerHook(t *testing.T) {
	rc := newReceiver(t, false, nil)
	d := newTestDeliverer(t)
	const n = 30
	for i := range n {
		d.enqueue(testJob(1, rc.URL+"/one", strconv.Itoa(i)))
		d.enqueue(testJob(2, rc.URL+"/two", strconv.Itoa(i)))
	}
	got := d.waitIdle(t)
	require.Len(t, got, 2*n)
	next := map[string]int{}
	for _, r := range rc.requests() {
		assert.Equal(t, strconv.Itoa(next[r.path]), r.body, r.path)
		next[r.path]++
	}
	assert.Equal(t, map[string]int{"/one": n, "/two": n}, next)
	d.mu.Lock()
	assert.Empty(t, d.queues, "no hook goroutine is left once the queues are empty")
	d.mu.Unlock()
}

func TestRedeliveryAfterReadTimeoutSendsTheSameBody(t *testing.T) {
	rc := newReceiver(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			hangUntilGone(n, w, r)
		}
	})
	d := newTestDeliverer(t)
	d.timeout = 250 * time.Millisecond
	d.enqueue(testJob(1, rc.URL, `{"id":1}`))
	checkRedelivered(t, d.waitIdle(t), rc, `{"id":1}`)
}

// checkRedelivered asserts that the first attempt timed out and later ones
// sent the same body until one was answered. (On a slow machine more than
// one attempt may time out.)
func checkRedelivered(t *testing.T, got []Delivery, rc *receiver, body string) {
	t.Helper()
	require.GreaterOrEqual(t, len(got), 2)
	for i, del := range got {
		assert.Equal(t, i+1, del.Attempt)
		assert.Equal(t, body, string(del.Body))
		if i < len(got)-1 {
			assert.Zero(t, del.Status)
			assert.Contains(t, del.Err, "timeout")
		}
	}
	assert.Equal(t, 200, got[len(got)-1].Status)
	reqs := rc.requests()
	require.Len(t, reqs, len(got))
	for _, r := range reqs {
		assert.Equal(t, body, r.body, "the same body again")
	}
}

// hangUp reads the request and closes the connection without an answer:
// a failure after connecting that is neither a timeout nor a reset.
func hangUp(_ int, w http.ResponseWriter, _ *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err == nil {
		conn.Close()
	}
}

func TestRedeliveryGivesUpAfterTheSchedule(t *testing.T) {
	rc := newReceiver(t, false, hangUp)
	d := newTestDeliverer(t)
	d.enqueue(testJob(1, rc.URL, `{"n":1}`))
	got := d.waitIdle(t)
	require.Len(t, got, 1+len(redeliveryDelays))
	for i, del := range got {
		assert.Equal(t, i+1, del.Attempt)
		assert.Zero(t, del.Status)
		assert.Contains(t, del.Err, "EOF")
	}
	assert.Len(t, rc.requests(), len(got))
}

func TestNoRedeliveryAfterAStatus(t *testing.T) {
	statuses := []int{http.StatusNotFound, http.StatusInternalServerError, http.StatusBadGateway, http.StatusFound}
	rc := newReceiver(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		if n <= len(statuses) {
			if statuses[n-1] == http.StatusFound {
				w.Header().Set("Location", "/landed")
			}
			w.WriteHeader(statuses[n-1])
		}
	})
	d := newTestDeliverer(t)
	for range statuses {
		d.enqueue(testJob(1, rc.URL, `{}`))
	}
	got := d.waitIdle(t)
	require.Len(t, got, len(statuses))
	for i, del := range got {
		assert.Equal(t, 1, del.Attempt)
		assert.Empty(t, del.Err)
		want := statuses[i]
		if want == http.StatusFound {
			want = http.StatusOK // the redirect was followed
		}
		assert.Equal(t, want, del.Status)
	}
	assert.Len(t, rc.requests(), len(statuses)+1, "one request each, plus the followed redirect")
}

func TestNoRedeliveryAfterConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	d := newTestDeliverer(t)
	d.enqueue(testJob(1, "http://"+addr+"/hook", `{}`))
	got := d.waitIdle(t)
	require.Len(t, got, 1)
	assert.Contains(t, got[0].Err, "refused")
	assert.Zero(t, got[0].Status)
}

func TestRedeliveryAfterTooManyRedirects(t *testing.T) {
	rc := newReceiver(t, false, func(_ int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/again", http.StatusFound)
	})
	d := newTestDeliverer(t)
	d.enqueue(testJob(1, rc.URL, `{}`))
	got := d.waitIdle(t)
	require.Len(t, got, 1+len(redeliveryDelays))
	assert.Contains(t, got[0].Err, "too many redirects")
	assert.Len(t, rc.requests(), 6*len(got), "the first request and 5 redirects per attempt")
}

func TestTLSVerification(t *testing.T) {
	rc := newReceiver(t, true, nil)
	d := newTestDeliverer(t)
	job := testJob(1, rc.URL, `{}`)
	d.enqueue(job)
	job.verifyTLS, job.hookID = false, 2
	d.enqueue(job)
	got := d.waitIdle(t)
	require.Len(t, got, 2, "a certificate error is not redelivered")
	byHook := map[int]Delivery{got[0].HookID: got[0], got[1].HookID: got[1]}
	assert.Zero(t, byHook[1].Status)
	assert.Contains(t, byHook[1].Err, "certificate")
	assert.Equal(t, 200, byHook[2].Status)
	assert.Len(t, rc.requests(), 1)
}

// deliverTwo sends {"n":1} then {"n":2} to one hook through a deliverer with
// the given faults, and returns the deliveries and the receiver.
func deliverTwo(t *testing.T, faults ...DeliveryFault) ([]Delivery, *receiver) {
	t.Helper()
	rc := newReceiver(t, false, nil)
	d := newTestDeliverer(t)
	d.faults = faults
	d.enqueue(testJob(1, rc.URL, `{"n":1}`))
	d.enqueue(testJob(1, rc.URL, `{"n":2}`))
	return d.waitIdle(t), rc
}

func TestFaultDrop(t *testing.T) {
	got, rc := deliverTwo(t, DeliveryFault{Drop: true})
	require.Len(t, got, 2)
	assert.Equal(t, "dropped", got[0].Err)
	assert.Zero(t, got[0].Status)
	assert.Equal(t, `{"n":1}`, string(got[0].Body))
	assert.Equal(t, []string{"Issue Hook"}, got[0].Header["X-Gitlab-Event"], "the headers it would have sent")
	assert.Equal(t, 200, got[1].Status)
	reqs := rc.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, `{"n":2}`, reqs[0].body)
}

func TestFaultDuplicate(t *testing.T) {
	got, rc := deliverTwo(t, DeliveryFault{Duplicate: true})
	require.Len(t, got, 3)
	assert.False(t, got[0].Duplicate)
	assert.True(t, got[1].Duplicate)
	assert.False(t, got[2].Duplicate)
	var bodies []string
	for _, r := range rc.requests() {
		bodies = append(bodies, r.body)
	}
	assert.Equal(t, []string{`{"n":1}`, `{"n":1}`, `{"n":2}`}, bodies)
}

func TestFaultDelayHoldsOnlyItsHook(t *testing.T) {
	rc := newReceiver(t, false, nil)
	d := newDeliverer(nil)
	d.faults = []DeliveryFault{{Delay: time.Hour}}
	d.enqueue(testJob(1, rc.URL+"/late", `{}`))
	d.enqueue(testJob(1, rc.URL+"/late", `{}`))
	d.enqueue(testJob(2, rc.URL+"/free", `{}`))
	got := d.waitCount(t, 1)
	assert.Equal(t, 2, got[0].HookID)
	d.close() // ends the delay: nothing of hook 1 is sent or recorded
	assert.Len(t, d.deliveries(), 1)
	reqs := rc.requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "/free", reqs[0].path)
}

func TestFaultShortDelayDelivers(t *testing.T) {
	got, _ := deliverTwo(t, DeliveryFault{Delay: time.Millisecond}, DeliveryFault{Drop: true})
	require.Len(t, got, 2)
	assert.Equal(t, 200, got[0].Status)
	assert.Equal(t, "dropped", got[1].Err, "faults apply to successive jobs")
}

func TestCloseStopsDeliveryInFlight(t *testing.T) {
	arrived := make(chan struct{})
	rc := newReceiver(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		close(arrived)
		hangUntilGone(n, w, r)
	})
	d := newDeliverer(nil)
	d.enqueue(testJob(1, rc.URL, `{}`))
	d.enqueue(testJob(1, rc.URL, `{}`))
	<-arrived
	d.close()
	assert.Empty(t, d.deliveries(), "an attempt cut short by Close is not recorded")
	assert.ErrorIs(t, d.waitFor(context.Background(), func() bool { return d.busy == 0 }), errDelivererClosed)
	d.enqueue(testJob(1, rc.URL, `{}`)) // ignored after Close
	assert.Len(t, rc.requests(), 1)
	d.close() // idempotent
}

func TestWaitHonoursTheContext(t *testing.T) {
	d := newTestDeliverer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := d.waitFor(ctx, func() bool { return len(d.done) >= 1 })
	assert.ErrorIs(t, err, context.Canceled)
}

// Payload shapes: each key of a payload object and its JSON type, as
// webhooks are documented to send them. A type is one of str, int, num,
// bool, null, obj, arr, sha (40 hex digits), dbtime ("2016-06-21 09:14:07
// UTC"), committime (RFC 3339 with a numeric offset) and date, or several
// joined by "|".
type shape map[string]string

func merge(shapes ...shape) shape {
	out := shape{}
	for _, s := range shapes {
		for k, v := range s {
			out[k] = v
		}
	}
	return out
}

var (
	userShape    = shape{"name": "str", "username": "str", "avatar_url": "str|null"}
	projectShape = shape{
		"name": "str", "description": "str|null", "web_url": "str", "avatar_url": "str|null", "git_ssh_url": "str",
		"git_http_url": "str", "namespace": "str", "visibility_level": "int", "path_with_namespace": "str",
		"default_branch": "str|null", "homepage": "str", "url": "str", "ssh_url": "str", "http_url": "str",
	}
	repoShortShape = shape{"name": "str", "url": "str", "description": "str|null", "homepage": "str"}
	repoLongShape  = merge(repoShortShape, shape{"git_http_url": "str", "git_ssh_url": "str", "visibility_level": "int"})
	commitShape    = shape{"id": "sha", "message": "str", "timestamp": "committime", "url": "str", "author": "obj"}
	authorShape    = shape{"name": "str", "email": "str"}
	pushCommit     = merge(commitShape, shape{"added": "arr", "modified": "arr", "removed": "arr"})
	pushShape      = shape{
		"object_kind": "str", "event_name": "str", "before": "sha", "after": "sha", "ref": "str",
		"checkout_sha": "sha|null", "message": "str|null", "user_id": "int", "user_name": "str", "user_email": "str",
		"user_avatar": "str|null", "project_id": "int", "project": "obj", "commits": "arr", "total_commits_count": "int",
		"repository": "obj",
	}
	issueColumnsShape = shape{
		"id": "int", "iid": "int", "title": "str", "description": "str|null", "state": "str", "project_id": "int",
		"author_id": "int", "assignee_id": "int|null", "milestone_id": "int|null", "updated_by_id": "int|null",
		"position": "int", "branch_name": "null", "confidential": "bool", "due_date": "date|null",
		"moved_to_id": "int|null", "deleted_at": "dbtime|null", "created_at": "dbtime", "updated_at": "dbtime",
	}
	actionShape    = shape{"url": "str", "action": "str"}
	issueTopShape  = shape{"object_kind": "str", "user": "obj", "project": "obj", "repository": "obj", "object_attributes": "obj"}
	mrColumnsShape = shape{
		"id": "int", "iid": "int", "title": "str", "description": "str|null", "state": "str", "merge_status": "str",
		"source_branch": "str", "target_branch": "str", "source_project_id": "int", "target_project_id": "int",
		"author_id": "int", "assignee_id": "int|null", "milestone_id": "int|null", "updated_by_id": "int|null",
		"position": "int", "locked_at": "dbtime|null", "merge_error": "str|null", "merge_params": "obj",
		"merge_when_build_succeeds": "bool", "merge_user_id": "int|null", "merge_commit_sha": "str|null",
		"deleted_at": "dbtime|null", "created_at": "dbtime", "updated_at": "dbtime", "source": "obj|null",
		"target": "obj", "last_commit": "obj|null", "work_in_progress": "bool",
	}
	noteAttrsShape = shape{
		"id": "int", "note": "str", "noteable_type": "str", "noteable_id": "int|null", "commit_id": "str|null",
		"author_id": "int", "project_id": "int", "updated_by_id": "int|null", "line_code": "str|null",
		"attachment": "str|null", "system": "bool", "st_diff": "obj|null", "type": "str|null",
		"created_at": "dbtime", "updated_at": "dbtime", "url": "str",
	}
	noteTopShape = shape{"object_kind": "str", "user": "obj", "project_id": "int", "project": "obj", "repository": "obj",
		"object_attributes": "obj"}
	buildShape = shape{
		"object_kind": "str", "ref": "str", "tag": "bool", "before_sha": "sha", "sha": "sha", "build_id": "int",
		"build_name": "str", "build_stage": "str", "build_status": "str", "build_started_at": "dbtime|null",
		"build_finished_at": "dbtime|null", "build_duration": "num|null", "build_allow_failure": "bool",
		"project_id": "int", "project_name": "str", "user": "obj", "commit": "obj", "repository": "obj",
	}
	buildUserShape = shape{"id": "int|null", "name": "str|null", "email": "str|null"}
	pipelineShape  = shape{
		"id": "int", "sha": "sha", "message": "str|null", "author_name": "str|null", "author_email": "str|null",
		"status": "str", "duration": "int|null", "started_at": "dbtime|null", "finished_at": "dbtime|null",
	}
)

var (
	shaRE        = regexp.MustCompile(`^[0-9a-f]{40}$`)
	commitTimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d([+-]\d\d:\d\d|Z)$`)
)

// jsonType reports whether v, decoded with UseNumber, has JSON type typ.
func jsonType(v any, typ string) bool {
	switch typ {
	case "null":
		return v == nil
	case "bool":
		_, ok := v.(bool)
		return ok
	case "obj":
		_, ok := v.(map[string]any)
		return ok
	case "arr":
		_, ok := v.([]any)
		return ok
	case "num":
		_, ok := v.(json.Number)
		return ok
	case "int":
		n, ok := v.(json.Number)
		_, err := n.Int64()
		return ok && err == nil
	}
	s, ok := v.(string)
	if !ok {
		return false
	}
	switch typ {
	case "str":
		return true
	case "sha":
		return shaRE.MatchString(s)
	case "dbtime":
		_, err := time.Parse("2006-01-02 15:04:05 MST", s)
		return err == nil && strings.HasSuffix(s, " UTC")
	case "committime":
		_, err := time.Parse(time.RFC3339, s)
		return err == nil && commitTimeRE.MatchString(s)
	case "date":
		_, err := time.Parse("2006-01-02", s)
		return err == nil
	}
	panic("unknown type " + typ)
}

// checkShape asserts that obj has exactly the keys of want, each of its type.
func checkShape(t *testing.T, where string, obj any, want shape) map[string]any {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !assert.True(t, ok, "%s: not an object: %#v", where, obj) {
		return nil
	}
	assert.ElementsMatch(t, slices.Collect(maps.Keys(want)), slices.Collect(maps.Keys(m)), "%s: keys", where)
	for k, typ := range want {
		v, present := m[k]
		if !present {
			continue
		}
		match := false
		for _, alt := range strings.Split(typ, "|") {
			match = match || jsonType(v, alt)
		}
		assert.True(t, match, "%s.%s = %#v, want %s", where, k, v, typ)
	}
	return m
}

// decodeBody decodes a payload keeping numbers as json.Number.
func decodeBody(t *testing.T, body []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	require.NoError(t, dec.Decode(&m), "%s", body)
	return m
}

// checkPayload checks a body of the given X-Gitlab-Event kind against the
// documented shapes, nested objects included, and returns it decoded.
func checkPayload(t *testing.T, event string, body []byte) map[string]any {
	t.Helper()
	m := decodeBody(t, body)
	switch event {
	case "Push Hook":
		checkShape(t, "push", m, pushShape)
		assert.Equal(t, "push", m["object_kind"])
		assert.Equal(t, "push", m["event_name"])
		checkShape(t, "push.project", m["project"], projectShape)
		checkShape(t, "push.repository", m["repository"], repoLongShape)
		for i, c := range m["commits"].([]any) {
			cm := checkShape(t, "push.commits["+strconv.Itoa(i)+"]", c, pushCommit)
			checkShape(t, "push.commits.author", cm["author"], authorShape)
		}
	case "Issue Hook":
		checkIssuable(t, "issue", m, issueColumnsShape, checkShape)
	case "Merge Request Hook":
		checkIssuable(t, "merge_request", m, mrColumnsShape, checkMergeRequestColumns)
	case "Note Hook":
		attrs := checkShape(t, "note.object_attributes", m["object_attributes"], noteAttrsShape)
		sibling := map[any]string{"Issue": "issue", "MergeRequest": "merge_request"}[attrs["noteable_type"]]
		require.NotEmpty(t, sibling, "noteable_type %v", attrs["noteable_type"])
		checkShape(t, "note", m, merge(noteTopShape, shape{sibling: "obj"}))
		assert.Equal(t, "note", m["object_kind"])
		checkShape(t, "note.user", m["user"], userShape)
		checkShape(t, "note.project", m["project"], projectShape)
		checkShape(t, "note.repository", m["repository"], repoShortShape)
		if sibling == "issue" {
			checkShape(t, "note.issue", m["issue"], issueColumnsShape)
		} else {
			checkMergeRequestColumns(t, "note.merge_request", m["merge_request"], mrColumnsShape)
		}
	case "Build Hook":
		checkShape(t, "build", m, buildShape)
		assert.Equal(t, "build", m["object_kind"])
		checkShape(t, "build.user", m["user"], buildUserShape)
		checkShape(t, "build.commit", m["commit"], pipelineShape)
		checkShape(t, "build.repository", m["repository"], repoLongShape)
	default:
		t.Fatalf("unexpected event %q", event)
	}
	return m
}

// checkIssuable checks an issue or merge request event of the given
// object_kind; checkColumns checks its object_attributes against columns
// plus the action fields.
func checkIssuable(t *testing.T, kind string, m map[string]any, columns shape, checkColumns func(*testing.T, string, any, shape) map[string]any) {
	t.Helper()
	top := issueTopShape
	if _, ok := m["assignee"]; ok {
		top = merge(top, shape{"assignee": "obj"})
		checkShape(t, kind+".assignee", m["assignee"], userShape)
	}
	checkShape(t, kind, m, top)
	assert.Equal(t, kind, m["object_kind"])
	checkShape(t, kind+".user", m["user"], userShape)
	checkShape(t, kind+".project", m["project"], projectShape)
	checkShape(t, kind+".repository", m["repository"], repoShortShape)
	checkColumns(t, kind+".object_attributes", m["object_attributes"], merge(columns, actionShape))
}

// checkMergeRequestColumns checks a merge request's columns, the nested
// projects and last commit included, and returns them decoded.
func checkMergeRequestColumns(t *testing.T, where string, obj any, want shape) map[string]any {
	t.Helper()
	m := checkShape(t, where, obj, want)
	checkShape(t, where+".target", m["target"], projectShape)
	if m["source"] != nil {
		checkShape(t, where+".source", m["source"], projectShape)
	}
	if m["last_commit"] != nil {
		c := checkShape(t, where+".last_commit", m["last_commit"], commitShape)
		checkShape(t, where+".last_commit.author", c["author"], authorShape)
	}
	for k, v := range m["merge_params"].(map[string]any) {
		assert.IsType(t, "", v, "%s.merge_params.%s", where, k)
	}
	return m
}

// marshalLocked builds a payload with the state lock held and encodes it as deliveries are.
func marshalLocked(t *testing.T, s *Server, build func() any) []byte {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := serverform.Encode(build())
	require.NoError(t, err)
	return b
}

func TestPayloadBuildersMatchTheDocumentedShapes(t *testing.T) {
	s := newTestServer(t)
	dev := s.AddUser("dana", false)
	pid := s.AddProject(s.AdminID, "Route Planner", 10)
	s.AddBranch(pid, "fix-eta", "")
	issueID := s.AddIssue(pid, dev.ID, "ETA off <by> one & more")
	mrID := s.AddMergeRequest(pid, dev.ID, "fix-eta", "master", "WIP: Fix ETA")
	noteOnIssue := s.AddNote(pid, "Issue", issueID, dev.ID, "Reproduced.")
	noteOnMR := s.AddNote(pid, "MergeRequest", mrID, dev.ID, "LGTM")
	buildID := s.AddBuild(pid, BuildSpec{Ref: "fix-eta", UserID: dev.ID})
	running := s.AddBuild(pid, BuildSpec{Ref: "fix-eta", Status: "running"})
	s.mu.Lock()
	s.issues[issueID].assigneeID, s.issues[issueID].dueDate = dev.ID, "2016-07-01"
	s.mu.Unlock()

	issue := checkPayload(t, "Issue Hook", marshalLocked(t, s, func() any { return s.issuePayload(s.issues[issueID], dev.ID, "open") }))
	attrs := issue["object_attributes"].(map[string]any)
	assert.Equal(t, "open", attrs["action"])
	assert.Equal(t, "ETA off <by> one & more", attrs["title"])
	assert.Contains(t, issue, "assignee")
	assert.Equal(t, s.URL+"/root/route-planner/issues/1", attrs["url"])

	mr := checkPayload(t, "Merge Request Hook", marshalLocked(t, s, func() any {
		return s.mergeRequestPayload(s.mergeRequests[mrID], dev.ID, "update")
	}))
	assert.NotContains(t, mr, "assignee", "absent, not null, without an assignee")
	assert.Equal(t, true, mr["object_attributes"].(map[string]any)["work_in_progress"])

	for _, id := range []int{noteOnIssue, noteOnMR} {
		checkPayload(t, "Note Hook", marshalLocked(t, s, func() any { return s.notePayload(s.notes[id]) }))
	}
	for _, id := range []int{buildID, running} {
		b := checkPayload(t, "Build Hook", marshalLocked(t, s, func() any { return s.buildPayload(s.builds[id]) }))
		assert.Equal(t, "Root / Route Planner", b["project_name"])
		assert.Equal(t, "running", b["commit"].(map[string]any)["status"], "one build running makes the pipeline run")
	}

	push := checkPayload(t, "Push Hook", marshalLocked(t, s, func() any {
		p := s.projects[pid]
		commits := []pushedCommit{{PushCommit: PushCommit{Message: "m", AuthorName: "a", AuthorEmail: "a@x", Added: []string{"f"}},
			id: strings.Repeat("a", 40), at: s.now()}}
		return s.pushData(p, s.users[dev.ID], "master", serverform.ZeroSHA, commits[0].id, commits)
	}))
	assert.Equal(t, "refs/heads/master", push["ref"])
}

func TestPayloadEscapesHTMLCharacters(t *testing.T) {
	s := newTestServer(t)
	pid := s.AddProject(s.AdminID, "p", 0)
	id := s.AddIssue(pid, s.AdminID, "a<b>&c\u2028")
	body := marshalLocked(t, s, func() any { return s.issuePayload(s.issues[id], s.AdminID, "open") })
	assert.Contains(t, string(body), `a\u003cb\u003e\u0026c\u2028`)
}

// hookAPI sends a form request as the administrator and decodes the object
// it answers, failing the test on any status of 300 or more.
func hookAPI(t *testing.T, s *Server, method, path string, kv ...string) map[string]any {
	t.Helper()
	form := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		form.Add(kv[i], kv[i+1])
	}
	req, err := http.NewRequest(method, s.URL+"/api/v3"+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Private-Token", s.AdminToken)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Less(t, resp.StatusCode, 300, "%s %s: %s", method, path, body)
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m), "%s", body)
	return m
}

// addHook registers a hook through the API with the given flags
// (name, value pairs) and returns its id.
func addHook(t *testing.T, s *Server, projectID int, hookURL string, flags ...string) int {
	t.Helper()
	m := hookAPI(t, s, "POST", "/projects/"+strconv.Itoa(projectID)+"/hooks", append([]string{"url", hookURL}, flags...)...)
	return int(m["id"].(float64))
}

func idOf(m map[string]any) string { return strconv.Itoa(int(m["id"].(float64))) }

// webhookFixture is a project with a developer, and a receiver.
type webhookFixture struct {
	s   *Server
	rc  *receiver
	dev User
	pid int
	p   string // "/projects/<pid>"
}

func newWebhookFixture(t *testing.T, useTLS bool, answer func(int, http.ResponseWriter, *http.Request)) *webhookFixture {
	s := newTestServer(t)
	f := &webhookFixture{s: s, rc: newReceiver(t, useTLS, answer), dev: s.AddUser("dana", false)}
	f.pid = s.AddProject(s.AdminID, "Route Planner", 10)
	s.AddMember(f.pid, f.dev.ID, 30)
	f.p = "/projects/" + strconv.Itoa(f.pid)
	return f
}

func (f *webhookFixture) idle(t *testing.T) []Delivery {
	t.Helper()
	require.NoError(t, f.s.WaitIdle(waitCtx(t)))
	return f.s.Deliveries()
}

var allHookFlags = []string{"push_events", "true", "issues_events", "true", "merge_requests_events", "true",
	"note_events", "true", "build_events", "true"}

func TestWebhooksFireForEveryKind(t *testing.T) {
	f := newWebhookFixture(t, false, nil)
	s := f.s
	hookID := addHook(t, s, f.pid, f.rc.URL+"/hook", allHookFlags...)

	is := hookAPI(t, s, "POST", f.p+"/issues", "title", "ETA off by one", "assignee_id", strconv.Itoa(f.dev.ID))
	issuePath := f.p + "/issues/" + idOf(is)
	hookAPI(t, s, "PUT", issuePath, "title", "ETA off by one minute")
	hookAPI(t, s, "PUT", issuePath, "state_event", "close")
	hookAPI(t, s, "PUT", issuePath, "state_event", "reopen", "description", "Rounding")
	first, err := s.Push(f.pid, "fix-eta", PushCommit{Message: "Round\n", Added: []string{"eta.go"}},
		PushCommit{Message: "Test\n", AuthorName: "Priya", AuthorEmail: "priya@example.org", Modified: []string{"eta_test.go"}})
	require.NoError(t, err)
	mr := hookAPI(t, s, "POST", f.p+"/merge_requests", "source_branch", "fix-eta", "target_branch", "master", "title", "Fix ETA")
	mrPath := f.p + "/merge_requests/" + idOf(mr)
	hookAPI(t, s, "PUT", mrPath, "title", "Fix ETA rounding")
	hookAPI(t, s, "PUT", mrPath, "state_event", "close")
	hookAPI(t, s, "PUT", mrPath, "state_event", "reopen")
	hookAPI(t, s, "POST", issuePath+"/notes", "body", "Reproduced.")
	hookAPI(t, s, "POST", mrPath+"/notes", "body", "LGTM")
	second, err := s.Push(f.pid, "fix-eta", PushCommit{Message: "Lint\n", Removed: []string{"old.go"}})
	require.NoError(t, err)
	hookAPI(t, s, "PUT", mrPath+"/merge")
	buildID := s.AddBuild(f.pid, BuildSpec{Ref: "fix-eta", UserID: f.dev.ID})
	_, runnerToken := s.AddRunner("r")
	status, _ := runnerRegister(t, s, url.Values{"token": {runnerToken}})
	require.Equal(t, http.StatusCreated, status)
	body, k, ct := runnerForm(url.Values{"token": {runnerToken}, "state": {"success"}})
	status, _, out := runnerCall(t, s, "PUT", "/builds/"+strconv.Itoa(buildID), body, k, ct)
	require.Equal(t, http.StatusOK, status, out)

	want := []struct{ event, what string }{
		{"Issue Hook", "open"}, {"Issue Hook", "update"}, {"Issue Hook", "close"}, {"Issue Hook", "reopen"},
		{"Issue Hook", "update"}, {"Push Hook", "refs/heads/fix-eta"}, {"Merge Request Hook", "open"},
		{"Merge Request Hook", "update"}, {"Merge Request Hook", "close"}, {"Merge Request Hook", "reopen"},
		{"Note Hook", "Issue"}, {"Note Hook", "MergeRequest"}, {"Push Hook", "refs/heads/fix-eta"},
		{"Merge Request Hook", "update"}, {"Merge Request Hook", "merge"},
		{"Build Hook", "pending"}, {"Build Hook", "running"}, {"Build Hook", "success"},
	}
	got := f.idle(t)
	reqs := f.rc.requests()
	require.Len(t, got, len(want))
	require.Len(t, reqs, len(want))
	var bodies []map[string]any
	for i, r := range reqs {
		w := want[i]
		assert.Equal(t, http.Header{"Content-Type": {"application/json"}, "X-Gitlab-Event": {w.event}}, got[i].Header)
		assert.Equal(t, []string{"application/json"}, r.header["Content-Type"])
		assert.Equal(t, []string{w.event}, r.header["X-Gitlab-Event"])
		assert.NotContains(t, r.header, "X-Gitlab-Token")
		assert.Equal(t, string(got[i].Body), r.body)
		assert.Equal(t, Delivery{HookID: hookID, ProjectID: f.pid, URL: f.rc.URL + "/hook", Event: w.event,
			Header: got[i].Header, Body: got[i].Body, Attempt: 1, Status: 200}, got[i])
		m := checkPayload(t, w.event, []byte(r.body))
		bodies = append(bodies, m)
		var what any
		switch w.event {
		case "Issue Hook", "Merge Request Hook":
			what = m["object_attributes"].(map[string]any)["action"]
		case "Push Hook":
			what = m["ref"]
		case "Note Hook":
			what = m["object_attributes"].(map[string]any)["noteable_type"]
		case "Build Hook":
			what = m["build_status"]
		}
		assert.Equal(t, w.what, what, "delivery %d (%s)", i, w.event)
	}
	attrs := func(i int) map[string]any { return bodies[i]["object_attributes"].(map[string]any) }
	assert.Equal(t, "ETA off by one", attrs(0)["title"], "the body shows the state at event time")
	assert.Equal(t, "ETA off by one minute", attrs(1)["title"])
	assert.Equal(t, "closed", attrs(2)["state"])
	assert.Equal(t, "Rounding", attrs(4)["description"])
	assert.Contains(t, bodies[0], "assignee")
	assert.Equal(t, serverform.ZeroSHA, bodies[5]["before"], "a new branch")
	assert.Equal(t, first, bodies[5]["after"])
	assert.Equal(t, json.Number("2"), bodies[5]["total_commits_count"])
	assert.Equal(t, first, bodies[12]["before"])
	assert.Equal(t, second, bodies[12]["after"])
	assert.Equal(t, second, attrs(13)["last_commit"].(map[string]any)["id"], "the push updated the merge request")
	assert.Equal(t, "merged", attrs(14)["state"])
	assert.Contains(t, bodies[10], "issue")
	assert.Contains(t, bodies[11], "merge_request")
	assert.Equal(t, json.Number(strconv.Itoa(buildID)), bodies[15]["build_id"])
	assert.Nil(t, bodies[15]["build_started_at"])
	assert.NotNil(t, bodies[17]["build_finished_at"])
	assert.Equal(t, "success", bodies[17]["commit"].(map[string]any)["status"])
}

func TestHookFlagsSelectKinds(t *testing.T) {
	f := newWebhookFixture(t, false, nil)
	s := f.s
	issues := addHook(t, s, f.pid, f.rc.URL+"/issues", "issues_events", "true", "push_events", "false")
	notes := addHook(t, s, f.pid, f.rc.URL+"/notes", "note_events", "true", "push_events", "false")
	pushes := addHook(t, s, f.pid, f.rc.URL+"/push") // push_events is on by default
	none := addHook(t, s, f.pid, f.rc.URL+"/none", "push_events", "false")
	other := s.AddProject(s.AdminID, "Other", 10)
	addHook(t, s, other, f.rc.URL+"/other", allHookFlags...)
	gone := addHook(t, s, f.pid, f.rc.URL+"/gone", allHookFlags...)
	hookAPI(t, s, "DELETE", f.p+"/hooks/"+strconv.Itoa(gone))

	is := hookAPI(t, s, "POST", f.p+"/issues", "title", "t")
	hookAPI(t, s, "POST", f.p+"/issues/"+idOf(is)+"/notes", "body", "b")
	_, err := s.Push(f.pid, "master", PushCommit{Message: "m"})
	require.NoError(t, err)
	hookAPI(t, s, "PUT", f.p+"/hooks/"+strconv.Itoa(none), "url", f.rc.URL+"/none", "merge_requests_events", "true",
		"push_events", "false")
	_, err = s.Push(f.pid, "fix", PushCommit{Message: "m"})
	require.NoError(t, err)
	hookAPI(t, s, "POST", f.p+"/merge_requests", "source_branch", "fix", "target_branch", "master", "title", "x")

	byHook := map[int][]string{}
	for _, d := range f.idle(t) {
		byHook[d.HookID] = append(byHook[d.HookID], d.Event)
	}
	assert.Equal(t, map[int][]string{
		issues: {"Issue Hook"}, notes: {"Note Hook"}, pushes: {"Push Hook", "Push Hook"}, none: {"Merge Request Hook"},
	}, byHook)
}

func TestHookTokenIsSentOnlyWhenSet(t *testing.T) {
	f := newWebhookFixture(t, false, nil)
	s := f.s
	with := addHook(t, s, f.pid, f.rc.URL+"/with", "issues_events", "true")
	without := addHook(t, s, f.pid, f.rc.URL+"/without", "issues_events", "true")
	require.NoError(t, s.SetHookToken(with, "t0ken&secret"))
	require.Error(t, s.SetHookToken(999999, "x"), "an unknown hook")
	hookAPI(t, s, "POST", f.p+"/issues", "title", "t")
	f.idle(t)
	for _, r := range f.rc.requests() {
		switch r.path {
		case "/with":
			assert.Equal(t, []string{"t0ken&secret"}, r.header["X-Gitlab-Token"])
		case "/without":
			assert.NotContains(t, r.header, "X-Gitlab-Token")
		default:
			t.Errorf("unexpected path %s", r.path)
		}
	}
	assert.Len(t, f.rc.requests(), 2)
	require.NoError(t, s.SetHookToken(with, ""))
	hookAPI(t, s, "POST", f.p+"/issues", "title", "t")
	f.idle(t)
	for _, r := range f.rc.requests()[2:] {
		assert.NotContains(t, r.header, "X-Gitlab-Token", "a removed token is not sent")
	}
	_ = without
}

func TestHookSSLVerificationFlag(t *testing.T) {
	f := newWebhookFixture(t, true, nil)
	s := f.s
	insecure := addHook(t, s, f.pid, f.rc.URL+"/insecure", "issues_events", "true", "enable_ssl_verification", "false")
	verified := addHook(t, s, f.pid, f.rc.URL+"/verified", "issues_events", "true")
	hookAPI(t, s, "POST", f.p+"/issues", "title", "t")
	got := f.idle(t)
	require.Len(t, got, 2, "a certificate error is final")
	byHook := map[int]Delivery{}
	for _, d := range got {
		byHook[d.HookID] = d
	}
	assert.Equal(t, 200, byHook[insecure].Status, "certificate not checked")
	assert.Zero(t, byHook[verified].Status)
	assert.Contains(t, byHook[verified].Err, "certificate")
	require.Len(t, f.rc.requests(), 1)
	assert.Equal(t, "/insecure", f.rc.requests()[0].path)
}

func TestServerRedeliversAfterAReadTimeoutOnly(t *testing.T) {
	f := newWebhookFixture(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		switch {
		case n == 1:
			hangUntilGone(n, w, r)
		case strings.HasPrefix(r.URL.Path, "/fail"):
			w.WriteHeader(http.StatusInternalServerError)
		case strings.HasPrefix(r.URL.Path, "/gone"):
			w.WriteHeader(http.StatusGone)
		}
	})
	s := f.s
	s.SetWebhookTimeout(250 * time.Millisecond)
	slow := addHook(t, s, f.pid, f.rc.URL+"/slow", "issues_events", "true")
	hookAPI(t, s, "POST", f.p+"/issues", "title", "t")
	got := f.idle(t)
	require.NotEmpty(t, got)
	checkRedelivered(t, got, f.rc, string(got[0].Body))
	for _, d := range got {
		assert.Equal(t, slow, d.HookID)
	}
	done := len(got)

	s.SetWebhookTimeout(0) // back to 10s; the answers below come at once
	hookAPI(t, s, "DELETE", f.p+"/hooks/"+strconv.Itoa(slow))
	addHook(t, s, f.pid, f.rc.URL+"/fail", "issues_events", "true")
	addHook(t, s, f.pid, f.rc.URL+"/gone", "issues_events", "true")
	hookAPI(t, s, "POST", f.p+"/issues", "title", "t")
	got = f.idle(t)[done:]
	require.Len(t, got, 2, "no redelivery after a 4xx or 5xx answer")
	statuses := []int{got[0].Status, got[1].Status}
	assert.ElementsMatch(t, []int{500, 410}, statuses)
	assert.Len(t, f.rc.requests(), done+2)
}

func TestServerDeliveryFaults(t *testing.T) {
	f := newWebhookFixture(t, false, nil)
	s := f.s
	addHook(t, s, f.pid, f.rc.URL, "issues_events", "true", "push_events", "false")
	s.InjectDeliveryFault(DeliveryFault{Duplicate: true})
	s.InjectDeliveryFault(DeliveryFault{Drop: true})
	s.InjectDeliveryFault(DeliveryFault{Delay: time.Millisecond})
	for _, title := range []string{"one", "two", "three", "four"} {
		hookAPI(t, s, "POST", f.p+"/issues", "title", title)
	}
	got := f.idle(t)
	require.Len(t, got, 5)
	title := func(d Delivery) any { return decodeBody(t, d.Body)["object_attributes"].(map[string]any)["title"] }
	assert.Equal(t, []any{"one", "one", "two", "three", "four"}, []any{title(got[0]), title(got[1]), title(got[2]), title(got[3]), title(got[4])})
	assert.Equal(t, []bool{false, true, false, false, false},
		[]bool{got[0].Duplicate, got[1].Duplicate, got[2].Duplicate, got[3].Duplicate, got[4].Duplicate})
	assert.Equal(t, got[0].Body, got[1].Body)
	assert.Equal(t, "dropped", got[2].Err)
	var sent []any
	for _, r := range f.rc.requests() {
		sent = append(sent, decodeBody(t, []byte(r.body))["object_attributes"].(map[string]any)["title"])
	}
	assert.Equal(t, []any{"one", "one", "three", "four"}, sent)
}

func TestPushMovesTheBranchAndRecordsTheEvent(t *testing.T) {
	f := newWebhookFixture(t, false, nil)
	s := f.s
	addHook(t, s, f.pid, f.rc.URL)
	commits := make([]PushCommit, 25)
	for i := range commits {
		commits[i] = PushCommit{Message: "commit " + strconv.Itoa(i), AuthorName: "A", AuthorEmail: "a@example.org"}
	}
	head, err := s.Push(f.pid, "feature/x", commits...)
	require.NoError(t, err)
	br := hookAPI(t, s, "GET", f.p+"/repository/branches/feature%2Fx")
	assert.Equal(t, head, br["commit"].(map[string]any)["id"])
	assert.Equal(t, "commit 24", br["commit"].(map[string]any)["message"])
	next, err := s.Push(f.pid, "feature/x", PushCommit{Message: "again"})
	require.NoError(t, err)
	assert.NotEqual(t, head, next)

	got := f.idle(t)
	require.Len(t, got, 2)
	pushes := []map[string]any{checkPayload(t, "Push Hook", got[0].Body), checkPayload(t, "Push Hook", got[1].Body)}
	assert.Len(t, pushes[0]["commits"], 20, "at most 20 commits")
	assert.Equal(t, json.Number("25"), pushes[0]["total_commits_count"])
	assert.Equal(t, "commit 5", pushes[0]["commits"].([]any)[0].(map[string]any)["message"], "the last 20, oldest first")
	assert.Equal(t, head, pushes[0]["checkout_sha"])
	assert.Equal(t, head, pushes[1]["before"])
	assert.Equal(t, next, pushes[1]["after"])
	assert.Equal(t, "Root", pushes[1]["commits"].([]any)[0].(map[string]any)["author"].(map[string]any)["name"],
		"an empty author is the pusher")

	status, _, body := do(t, s, "GET", "/api/v3"+f.p+"/events", http.Header{"Private-Token": {s.AdminToken}}, nil)
	require.Equal(t, http.StatusOK, status)
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var events []map[string]any
	require.NoError(t, dec.Decode(&events))
	require.GreaterOrEqual(t, len(events), 2)
	assert.Equal(t, "pushed to", events[0]["action_name"])
	assert.Equal(t, "pushed new", events[1]["action_name"])
	for i := range 2 {
		data, err := json.Marshal(events[1-i]["data"])
		require.NoError(t, err)
		checkPayload(t, "Push Hook", data)
		assert.JSONEq(t, string(got[i].Body), string(data), "the event's data is the push payload")
	}

	_, err = s.Push(999999, "x", PushCommit{})
	assert.Error(t, err)
	_, err = s.Push(f.pid, "x")
	assert.Error(t, err, "no commits")
	_, err = s.Push(f.pid, " ", PushCommit{})
	assert.Error(t, err, "no branch")
}

func TestIssueMoveAndMergeClosingFireHooks(t *testing.T) {
	f := newWebhookFixture(t, false, nil)
	s := f.s
	other := s.AddProject(s.AdminID, "Other", 10)
	addHook(t, s, f.pid, f.rc.URL+"/here", "issues_events", "true", "push_events", "false")
	addHook(t, s, other, f.rc.URL+"/there", "issues_events", "true", "push_events", "false")
	moved := hookAPI(t, s, "POST", f.p+"/issues", "title", "moving")
	hookAPI(t, s, "POST", f.p+"/issues/"+idOf(moved)+"/move", "to_project_id", strconv.Itoa(other))
	closing := hookAPI(t, s, "POST", f.p+"/issues", "title", "closed by a merge")
	_, err := s.Push(f.pid, "fix", PushCommit{Message: "fix"})
	require.NoError(t, err)
	mr := hookAPI(t, s, "POST", f.p+"/merge_requests", "source_branch", "fix", "target_branch", "master", "title", "Fix",
		"description", "Closes #"+strconv.Itoa(int(closing["iid"].(float64))))
	hookAPI(t, s, "PUT", f.p+"/merge_requests/"+idOf(mr)+"/merge")

	var got []string
	for _, d := range f.idle(t) {
		attrs := checkPayload(t, d.Event, d.Body)["object_attributes"].(map[string]any)
		got = append(got, d.URL[len(f.rc.URL):]+" "+attrs["title"].(string)+" "+attrs["action"].(string))
	}
	assert.ElementsMatch(t, []string{"/here moving open", "/here moving close", "/there moving open",
		"/here closed by a merge open", "/here closed by a merge close"}, got)
}

func TestCloseStopsWebhookDelivery(t *testing.T) {
	arrived := make(chan struct{})
	rc := newReceiver(t, false, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			close(arrived)
		}
		hangUntilGone(n, w, r)
	})
	s := mustServer(t)
	pid := s.AddProject(s.AdminID, "p", 0)
	addHook(t, s, pid, rc.URL, "issues_events", "true")
	s.InjectDeliveryFault(DeliveryFault{Delay: time.Hour})
	hookAPI(t, s, "POST", "/projects/"+strconv.Itoa(pid)+"/issues", "title", "delayed")
	addHook(t, s, pid, rc.URL, "issues_events", "true") // a second hook, so one delivery is in flight
	hookAPI(t, s, "POST", "/projects/"+strconv.Itoa(pid)+"/issues", "title", "hangs")
	<-arrived
	s.Close() // returns with the delay and the attempt in flight cut short; goleak checks no goroutine is left
	assert.Error(t, s.WaitIdle(context.Background()))
	_, err := s.WaitDeliveries(context.Background(), 1)
	assert.Error(t, err)
	assert.Len(t, rc.requests(), 1)
}

func TestMergeWhenBuildSucceedsFiresBuildThenMerge(t *testing.T) {
	f := newWebhookFixture(t, false, nil)
	s := f.s
	addHook(t, s, f.pid, f.rc.URL, "merge_requests_events", "true", "build_events", "true", "push_events", "false")
	_, err := s.Push(f.pid, "fix", PushCommit{Message: "fix"})
	require.NoError(t, err)
	mr := hookAPI(t, s, "POST", f.p+"/merge_requests", "source_branch", "fix", "target_branch", "master", "title", "Fix")
	buildID := s.AddBuild(f.pid, BuildSpec{Ref: "fix"})
	hookAPI(t, s, "PUT", f.p+"/merge_requests/"+idOf(mr)+"/merge", "merge_when_build_succeeds", "true")
	s.SetBuildStatus(buildID, "failed") // the retry replaces it in the pipeline
	retried := hookAPI(t, s, "POST", f.p+"/builds/"+strconv.Itoa(buildID)+"/retry")
	s.SetBuildStatus(int(retried["id"].(float64)), "success")

	var got []string
	for _, d := range f.idle(t) {
		m := checkPayload(t, d.Event, d.Body)
		if d.Event == "Build Hook" {
			got = append(got, "build "+m["build_status"].(string)+" "+m["commit"].(map[string]any)["status"].(string))
		} else {
			got = append(got, "merge request "+m["object_attributes"].(map[string]any)["action"].(string))
		}
	}
	assert.Equal(t, []string{"merge request open", "build pending pending", "build failed failed", "build pending pending",
		"build success success", "merge request merge"}, got)
}
