package fakecmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/collabtest/cassette"
	"github.com/collabsvc/collab/internal/suite"
	"github.com/collabsvc/collab/runner"
)

// canary is the administrator's token while the session is recorded: it
// must appear nowhere in the cassette.
const canary = "canary-5b1e0c9d7a3f"

// session is what the recorded test session does through hc against the
// server at base: a short scripted session, then every method of the API
// client and of the runner client. It returns each call's outcome as text,
// with base written as BASE.
func session(t *testing.T, hc *http.Client, base, token string) []string {
	t.Helper()
	ctx := context.Background()
	c, err := collab.NewClient(base, collab.WithPrivateToken(token), collab.WithHTTPClient(hc), collab.WithoutRetries())
	require.NoError(t, err)
	rc, err := runner.NewClient(base, collab.WithHTTPClient(hc), collab.WithoutRetries())
	require.NoError(t, err)
	out := scripted(t, c, rc)
	calls := suite.Sweep(ctx, c, suite.Args{String: "x-arg"})
	calls = append(calls, suite.Sweep(ctx, rc, suite.Args{String: "x-arg"}, "API")...)
	for _, call := range calls {
		out = append(out, fmt.Sprintf("%s: %v", call.Name, call.Err))
	}
	for i := range out {
		out[i] = strings.ReplaceAll(out[i], base, "BASE")
	}
	return out
}

// scripted makes a project with an issue that is read, closed and read
// again, a note, a label and a milestone that are changed, and a runner
// that registers and asks for a build; and it reaches the routes whose
// methods refuse the sweep's made-up arguments.
func scripted(t *testing.T, c *collab.Client, rc *runner.Client) []string {
	ctx := context.Background()
	var out []string
	note := func(name string, err error) { out = append(out, fmt.Sprintf("%s: %v", name, err)) }
	p, _, err := c.Projects.Create(ctx, &collab.CreateProjectOptions{Name: "recorded"})
	require.NoError(t, err)
	p, _, err = c.Projects.Get(ctx, p.ID)
	require.NoError(t, err)
	issue, _, err := c.Issues.Create(ctx, p.ID, &collab.CreateIssueOptions{Title: "first"})
	require.NoError(t, err)
	_, _, err = c.Issues.Get(ctx, p.ID, issue.ID)
	note("read", err)
	_, _, err = c.Issues.Update(ctx, p.ID, issue.ID, &collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)})
	note("close", err)
	again, _, err := c.Issues.Get(ctx, p.ID, issue.ID)
	note("read again: "+string(again.State), err)
	_, _, err = c.Notes.CreateIssueNote(ctx, p.ID, issue.ID, &collab.CreateNoteOptions{Body: "a note"})
	note("note", err)
	_, _, err = c.Labels.Create(ctx, p.ID, &collab.CreateLabelOptions{Name: "bug", Color: "#d9534f"})
	note("label", err)
	_, _, err = c.Labels.Update(ctx, p.ID, "bug", &collab.UpdateLabelOptions{Color: collab.Ptr("#5cb85c")})
	note("label colour", err)
	m, _, err := c.Milestones.Create(ctx, p.ID, &collab.CreateMilestoneOptions{Title: "v1"})
	require.NoError(t, err)
	_, _, err = c.Milestones.Update(ctx, p.ID, m.ID, &collab.UpdateMilestoneOptions{Title: collab.Ptr("v1.0")})
	note("milestone", err)
	_, _, err = c.Builds.List(ctx, p.ID, nil)
	note("builds", err)
	_, _, err = c.Builds.ListForCommit(ctx, p.ID, "master", nil)
	note("commit builds", err)
	reg, err := rc.RegisterRunner(ctx, string(p.RunnersToken), &runner.RegisterRunnerOptions{Description: "r"})
	require.NoError(t, err)
	_, err = rc.RequestBuild(ctx, string(reg.Token), &runner.Info{Name: "r"})
	note("request build", err)
	note("delete runner", rc.DeleteRunner(ctx, string(reg.Token)))
	return out
}

// sdkCalls tells the routes of the fake that the SDK calls from those it
// does not: the deprecated ones (the singular merge_request, comments, the
// POST spelling of cancel_merge_when_build_succeeds) and the job-queue path
// of deployed servers ("sidekiq" where the API documents "jobqueue").
func sdkCalls(route string) bool {
	return !strings.Contains(route, "/merge_request/") && !strings.HasSuffix(route, "/comments") &&
		!strings.Contains(route, "/sidekiq/") && route != "POST /api/v3/projects/:id/merge_requests/:mr_id/cancel_merge_when_build_succeeds"
}

// placeholders are the secrets' placeholders, plain and form-encoded.
var placeholders = regexp.MustCompile(`(<|%3C)secret-[0-9]+(>|%3E)`)

// cassetteText is c as written, for comparing two recordings. Placeholders
// are numbered by the order secrets are met, and the replaying client's
// token is another secret than the recorded one, so they are left out.
func cassetteText(t *testing.T, c *cassette.Cassette) string {
	t.Helper()
	var b bytes.Buffer
	_, err := c.WriteTo(&b)
	require.NoError(t, err)
	return placeholders.ReplaceAllString(b.String(), "<secret>")
}

// TestRecordReplayConform records a session of every endpoint against the
// fake, replays it through the transport and through the fake command's
// -replay, and measures fakes against it.
func TestRecordReplayConform(t *testing.T) {
	srv := collabtest.NewTestServer(t, collabtest.WithAdminToken(canary))
	rec := cassette.NewRecorder()
	recorded := session(t, &http.Client{Transport: rec.Transport(nil)}, srv.URL, canary)
	file := filepath.Join(t.TempDir(), "session.json")
	require.NoError(t, rec.Cassette().WriteFile(file))
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	for _, secret := range []string{canary, srv.AdminOAuthToken, "rtok-", "runner-", "ptok-"} {
		assert.NotContains(t, string(data), secret)
	}
	cas, err := cassette.Load(file)
	require.NoError(t, err)
	want := cassetteText(t, cas)
	for _, route := range collabtest.Routes() {
		if sdkCalls(route) {
			assert.Contains(t, want, `"route": "`+route+`"`, "the session reaches every endpoint")
		}
	}

	t.Run("transport", func(t *testing.T) {
		p := cassette.NewReplayer(cas)
		again := cassette.NewRecorder()
		got := session(t, &http.Client{Transport: again.Transport(p)}, "http://replay.invalid", "any-token")
		assert.Equal(t, recorded, got)
		assert.Equal(t, want, cassetteText(t, again.Cassette()), "every request got the recorded answer")
		assert.NoError(t, p.Verify())
		assert.Contains(t, got, "read again: closed: <nil>", "the read after the write got the later answer")
	})
	t.Run("fake -replay", func(t *testing.T) {
		base, stop := startFake(t, "-addr", "127.0.0.1:0", "-replay", file)
		again := cassette.NewRecorder()
		got := session(t, &http.Client{Transport: again.Transport(nil)}, base, "another-token")
		assert.Equal(t, recorded, got)
		assert.Equal(t, want, cassetteText(t, again.Cassette()))
		out, errOut := stop()
		assert.Contains(t, out, "collab fake stopped")
		assert.Empty(t, errOut, "no exchange went unused")
	})
	t.Run("changed parameter", func(t *testing.T) {
		hc := &http.Client{Transport: cassette.NewReplayer(cas)}
		e := findExchange(t, cas, "POST /api/v3/projects/:id/issues")
		body := strings.Replace(string(e.Request.Body()), "first", "second", 1)
		req, err := http.NewRequest(e.Method, "http://replay.invalid"+e.URL(), strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", e.Request.Header.Get("Content-Type"))
		_, err = hc.Do(req)
		require.ErrorContains(t, err, "the closest is #2 POST /api/v3/projects/:id/issues, which differs in body /title")
		assert.ErrorContains(t, err, `recorded "first", got "second"`)
		e = findExchange(t, cas, "GET /api/v3/projects/:id/issues/:issue_id")
		_, err = hc.Get("http://replay.invalid" + e.Path + "?state=closed")
		assert.ErrorContains(t, err, `differs in query key "state" (recorded (missing), got "closed")`)
	})
	t.Run("conform", func(t *testing.T) { testConform(t, cas) })
}

// testConform measures a fresh fake against cas (no difference), then a
// fake with one behaviour changed (exactly that difference, wherever the
// session read a project).
func testConform(t *testing.T, cas *cassette.Cassette) {
	fresh := collabtest.NewTestServer(t)
	diffs, err := cassette.Conform(context.Background(), cas, fresh.URL, cassette.ConformOptions{Token: fresh.AdminToken})
	require.NoError(t, err)
	assert.Empty(t, diffs)

	// Another history: every object the session makes gets other ids, and
	// Conform follows them.
	shifted := collabtest.NewTestServer(t)
	for _, name := range []string{"u1", "u2", "u3", "u4", "u5"} {
		shifted.AddUser(name, false)
	}
	diffs, err = cassette.Conform(context.Background(), cas, shifted.URL, cassette.ConformOptions{Token: shifted.AdminToken})
	require.NoError(t, err)
	assert.Empty(t, diffs)

	changed := collabtest.NewTestServer(t)
	diffs, err = cassette.Conform(context.Background(), cas, changed.URL,
		cassette.ConformOptions{Token: changed.AdminToken, Client: &http.Client{Transport: trunkProjects{}}})
	require.NoError(t, err)
	var injected []cassette.Difference
	for i, e := range cas.Exchanges {
		if e.Route == "GET /api/v3/projects/:id" && e.Status == http.StatusOK {
			injected = append(injected, cassette.Difference{Exchange: i, Route: e.Route, Part: "body /default_branch",
				Recorded: `"master"`, Got: `"trunk"`})
		}
	}
	require.NotEmpty(t, injected)
	assert.Equal(t, injected, diffs)
}

// trunkProjects changes one behaviour of the server it sends to: a
// project's default branch reads "trunk".
type trunkProjects struct{}

func (trunkProjects) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	segs := strings.Split(req.URL.Path, "/")
	if err != nil || req.Method != http.MethodGet || len(segs) != 5 || segs[3] != "projects" || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	defer resp.Body.Close()
	var p map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
		return nil, err
	}
	p["default_branch"] = "trunk"
	b, err := json.Marshal(p)
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	return resp, err
}

func findExchange(t *testing.T, c *cassette.Cassette, route string) cassette.Exchange {
	t.Helper()
	for _, e := range c.Exchanges {
		if e.Route == route {
			return e
		}
	}
	t.Fatalf("no exchange on %s", route)
	return cassette.Exchange{}
}

// startFake runs the command with args until stop, which returns its
// standard output and error; it returns the base URL of its banner.
func startFake(t *testing.T, args ...string) (base string, stop func() (string, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	outR, outW := io.Pipe()
	var errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, "collab fake", args, outW, &errOut)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	require.True(t, lines.Scan(), "a banner; stderr: %s", errOut.String())
	base, ok := strings.CutPrefix(strings.TrimSuffix(lines.Text(), "/api/v3"), "collab fake serving ")
	require.True(t, ok, lines.Text())
	var rest strings.Builder
	copied := make(chan struct{})
	go func() {
		for lines.Scan() {
			rest.WriteString(lines.Text() + "\n")
		}
		close(copied)
	}()
	stopped := false
	stop = func() (string, string) {
		if !stopped {
			stopped = true
			cancel()
			require.Equal(t, 0, <-done)
			<-copied
		}
		return rest.String(), errOut.String()
	}
	t.Cleanup(func() { stop() })
	return base, stop
}
