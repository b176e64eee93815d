package collab_test

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-querystring/query"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

func buildsTime(t *testing.T, s string) *collab.Time {
	t.Helper()
	tm, err := collab.ParseTime(s)
	require.NoError(t, err)
	return &tm
}

func buildsCommit(t *testing.T, title string) *collab.BuildCommit {
	return &collab.BuildCommit{
		ID: "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd", ShortID: "0ff3ae19", Title: title, Message: title,
		AuthorName: "Administrator", AuthorEmail: "admin@example.com", CreatedAt: buildsTime(t, "2016-07-11T12:10:48.000+02:00"),
	}
}

// --- unit tests (httpmock) ---

func TestBuildsGet(t *testing.T) {
	c, m := newMockClient(t)
	m.ReplyFile(200, "builds_build.json")
	b, resp, err := c.Builds.Get(context.Background(), "group/my.project", 69)
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	m.AssertRequest("GET", "projects/group%2Fmy%2Eproject/builds/69", nil)
	want := &collab.Build{
		ID: 69, Name: "rspec:other", Stage: "test", Ref: "feature/build-api", Tag: false, Status: collab.BuildSuccess,
		Coverage:   collab.Ptr(97.5),
		CreatedAt:  buildsTime(t, "2016-07-11T10:12:06.301Z"),
		StartedAt:  buildsTime(t, "2016-07-11T10:12:08.652Z"),
		FinishedAt: buildsTime(t, "2016-07-11T10:14:31.000Z"),
		Runner: &collab.BuildRunner{
			ID: 4, Description: collab.Ptr("docker-runner-01"), Active: true, IsShared: false, Name: collab.Ptr("gitlab-ci-multi-runner"),
		},
		ArtifactsFile: &collab.ArtifactsFile{Filename: "artifacts.zip", Size: 1024000},
		Commit: &collab.BuildCommit{
			ID: "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd", ShortID: "0ff3ae19", Title: "Test the CI integration.",
			Message: "Test the CI integration.\n\nWith a body.", AuthorName: "Administrator", AuthorEmail: "admin@example.com",
			CreatedAt: buildsTime(t, "2016-07-11T12:10:48.000+02:00"),
		},
		User: &collab.BuildUser{
			User: collab.User{
				ID: 1, Name: "Administrator", Username: "root", State: "active",
				AvatarURL: collab.Ptr("http://www.gravatar.com/avatar/e64c7d89f26bd1972efa854d13d7dd61?s=80&d=identicon"),
				WebURL:    "http://collab.example.com/u/root", CreatedAt: buildsTime(t, "2016-01-11T10:13:33.506Z"),
			},
			UserProfile: collab.UserProfile{Bio: collab.Ptr("Keeps the lights on"), IsAdmin: true, LinkedIn: "root-li", Skype: "root-skype", Twitter: "root_tw",
				WebsiteURL: "https://root.example.com"},
		},
	}
	assert.Equal(t, want, b)
}

func TestBuildsGetErrors(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		want   error
	}{
		{404, `{"message":"404 Build Not Found"}`, collab.ErrNotFound},
		{403, `{"message":"403 Forbidden"}`, collab.ErrForbidden},
		{401, `{"message":"401 Unauthorized"}`, collab.ErrUnauthorized},
		{500, `<html>oops</html>`, collab.ErrServer},
	} {
		c, m := newMockClient(t)
		m.Reply(tc.status, tc.body)
		b, _, err := c.Builds.Get(context.Background(), 1, 2)
		assert.ErrorIs(t, err, tc.want, tc.status)
		assert.Nil(t, b)
	}
	c, m := newMockClient(t)
	m.Reply(200, "null")
	b, _, err := c.Builds.Get(context.Background(), 1, 2)
	assert.Error(t, err, "a null record is an error")
	assert.Nil(t, b)

	_, _, err = c.Builds.Get(context.Background(), 1.5, 2)
	assert.ErrorContains(t, err, "must be an integer id")
	_, _, err = c.Builds.Get(context.Background(), "", 2)
	assert.Error(t, err)
	assert.Equal(t, 1, m.Count(), "bad ids send nothing")
}

func TestBuildsList(t *testing.T) {
	c, m := newMockClient(t)
	m.ReplyFile(200, "builds_list.json", "X-Total", "2", "X-Page", "1", "X-Total-Pages", "1")
	bs, resp, err := c.Builds.List(context.Background(), "group/my.project", &collab.ListBuildsOptions{
		ListOptions: collab.ListOptions{Page: 1, PerPage: 2},
		Scope:       collab.BuildScopes{collab.BuildPending, collab.BuildFailed},
	})
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/group%2Fmy%2Eproject/builds", url.Values{
		"page": {"1"}, "per_page": {"2"}, "scope[0]": {"pending"}, "scope[1]": {"failed"},
	})
	assert.Equal(t, 2, resp.TotalItems)
	want := []*collab.Build{
		{
			ID: 70, Name: "deploy", Stage: "deploy", Ref: "v1.0.0", Tag: true, Status: collab.BuildPending,
			CreatedAt: buildsTime(t, "2016-07-11T10:15:00.000Z"), Commit: buildsCommit(t, "Release"),
		},
		{
			ID: 69, Name: "rspec:other", Stage: "test", Ref: "master", Status: collab.BuildFailed, Coverage: collab.Ptr(12.0),
			CreatedAt:  buildsTime(t, "2016-07-11T10:12:06.301Z"),
			StartedAt:  buildsTime(t, "2016-07-11T10:12:08.652Z"),
			FinishedAt: buildsTime(t, "2016-07-11T10:14:31.000Z"),
			Runner:     &collab.BuildRunner{ID: 5, IsShared: true},
			Commit:     buildsCommit(t, "Release"),
			User: &collab.BuildUser{User: collab.User{
				ID: 2, Name: "Alice", Username: "alice", State: "active", WebURL: "http://collab.example.com/u/alice",
				CreatedAt: buildsTime(t, "2016-02-01T09:00:00.000Z"),
			}},
		},
	}
	assert.Equal(t, want, bs)

	// One scope is a plain value; no options send no parameters.
	_, _, err = c.Builds.List(context.Background(), 7, &collab.ListBuildsOptions{Scope: collab.BuildScopes{collab.BuildRunning}})
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/7/builds", url.Values{"scope": {"running"}})
	_, _, err = c.Builds.List(context.Background(), 7, nil)
	require.NoError(t, err)
	m.AssertRequest("GET", "projects/7/builds", nil)
}

func TestBuildsListInvalidScope(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(200, "[]")
	ctx := context.Background()
	_, _, err := c.Builds.List(ctx, 1, &collab.ListBuildsOptions{Scope: collab.BuildScopes{"pending", "done"}})
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	assert.ErrorContains(t, err, `opt.Scope[1]: is "done"`)
	_, _, err = c.Builds.ListForCommit(ctx, 1, "abc", &collab.ListBuildsForCommitOptions{Scope: collab.BuildScopes{""}})
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	n := 0
	for _, err := range c.Builds.All(ctx, 1, &collab.ListBuildsOptions{Scope: collab.BuildScopes{"Pending"}}) {
		assert.ErrorIs(t, err, collab.ErrInvalidArgument)
		n++
	}
	for _, err := range c.Builds.AllForCommit(ctx, 1, "abc", &collab.ListBuildsForCommitOptions{Scope: collab.BuildScopes{"x"}}) {
		assert.ErrorIs(t, err, collab.ErrInvalidArgument)
		n++
	}
	assert.Equal(t, 2, n, "each iterator yields its error once")
	assert.Zero(t, m.Count(), "an invalid scope must not reach the server")
}

func TestBuildScopesEncoding(t *testing.T) {
	for _, tc := range []struct {
		scopes collab.BuildScopes
		want   string
	}{
		{nil, ""},
		{collab.BuildScopes{}, ""},
		{collab.BuildScopes{collab.BuildSkipped}, "scope=skipped"},
		{collab.BuildScopes{collab.BuildPending, collab.BuildRunning, collab.BuildCanceled}, "scope%5B0%5D=pending&scope%5B1%5D=running&scope%5B2%5D=canceled"},
	} {
		v, err := query.Values(collab.ListBuildsOptions{Scope: tc.scopes})
		require.NoError(t, err)
		assert.Equal(t, tc.want, v.Encode(), "%v", tc.scopes)
	}
	assert.NoError(t, collab.BuildScopes{collab.BuildPending, collab.BuildRunning, collab.BuildSuccess, collab.BuildFailed, collab.BuildCanceled, collab.BuildSkipped}.Validate())
	assert.ErrorIs(t, collab.BuildScopes{"created"}.Validate(), collab.ErrInvalidArgument)
}

func TestBuildsListForCommit(t *testing.T) {
	c, m := newMockClient(t)
	m.ReplyFile(200, "builds_list.json")
	bs, _, err := c.Builds.ListForCommit(context.Background(), "group/my.project", "0ff3ae19", &collab.ListBuildsForCommitOptions{Scope: collab.BuildScopes{collab.BuildSuccess}})
	require.NoError(t, err)
	require.Len(t, bs, 2)
	assert.Equal(t, 70, bs[0].ID)
	m.AssertRequest("GET", "projects/group%2Fmy%2Eproject/repository/commits/0ff3ae19/builds", url.Values{"scope": {"success"}})

	_, _, err = c.Builds.ListForCommit(context.Background(), 1, "", nil)
	assert.Error(t, err, "sha is required")
	assert.Equal(t, 1, m.Count())

	c, m = newMockClient(t)
	m.Reply(404, `{"message":"404 Commit Not Found"}`)
	_, _, err = c.Builds.ListForCommit(context.Background(), 1, "nope", nil)
	assert.ErrorIs(t, err, collab.ErrNotFound)
}

func TestBuildsActions(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		call    func(*collab.Client) (*collab.Build, *collab.Response, error)
		path    string
		status  int
		fixture string
		check   func(*testing.T, *collab.Build)
	}{
		{"cancel", func(c *collab.Client) (*collab.Build, *collab.Response, error) {
			return c.Builds.Cancel(ctx, "group/my.project", 69)
		},
			"projects/group%2Fmy%2Eproject/builds/69/cancel", 201, "builds_build.json",
			func(t *testing.T, b *collab.Build) { assert.Equal(t, 69, b.ID) }},
		{"retry", func(c *collab.Client) (*collab.Build, *collab.Response, error) { return c.Builds.Retry(ctx, 1, 69) },
			"projects/1/builds/69/retry", 201, "builds_retried.json",
			func(t *testing.T, b *collab.Build) {
				assert.Equal(t, &collab.Build{
					ID: 71, Name: "rspec:other", Stage: "test", Ref: "master", Status: collab.BuildPending,
					CreatedAt: buildsTime(t, "2016-07-11T10:20:00.000Z"), Commit: buildsCommit(t, "Release"),
				}, b)
			}},
		{"erase", func(c *collab.Client) (*collab.Build, *collab.Response, error) { return c.Builds.Erase(ctx, 1, 69) },
			"projects/1/builds/69/erase", 201, "builds_erased.json",
			func(t *testing.T, b *collab.Build) {
				assert.Equal(t, &collab.Build{
					ID: 69, Name: "rspec:other", Stage: "test", Ref: "master", Status: collab.BuildFailed,
					CreatedAt:  buildsTime(t, "2016-07-11T10:12:06.301Z"),
					StartedAt:  buildsTime(t, "2016-07-11T10:12:08.652Z"),
					FinishedAt: buildsTime(t, "2016-07-11T10:14:31.000Z"),
					Commit:     buildsCommit(t, "Release"),
				}, b)
			}},
		{"keep", func(c *collab.Client) (*collab.Build, *collab.Response, error) {
			return c.Builds.KeepArtifacts(ctx, 1, 69)
		},
			"projects/1/builds/69/artifacts/keep", 200, "builds_kept.json",
			func(t *testing.T, b *collab.Build) {
				assert.Equal(t, &collab.Build{
					ID: 69, Name: "rspec:other", Stage: "test", Ref: "master", Status: collab.BuildSuccess,
					CreatedAt:   buildsTime(t, "2016-07-11T10:12:06.301Z"),
					StartedAt:   buildsTime(t, "2016-07-11T10:12:08.652Z"),
					FinishedAt:  buildsTime(t, "2016-07-11T10:14:31.000Z"),
					DownloadURL: collab.Ptr("https://collab.example.com/group/project/builds/69/artifacts/download"),
					Commit:      buildsCommit(t, "Release"),
				}, b)
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, m := newMockClient(t)
			m.ReplyFile(tc.status, tc.fixture)
			b, resp, err := tc.call(c)
			require.NoError(t, err)
			assert.Equal(t, tc.status, resp.StatusCode)
			rec := m.AssertRequest("POST", tc.path, nil)
			assert.Empty(t, rec.Body)
			tc.check(t, b)

			for status, want := range map[int]error{404: collab.ErrNotFound, 403: collab.ErrForbidden, 401: collab.ErrUnauthorized} {
				c, m := newMockClient(t)
				m.Reply(status, `{"message":"`+strconv.Itoa(status)+` Forbidden - Build is not retryable"}`)
				b, _, err := tc.call(c)
				assert.ErrorIs(t, err, want)
				assert.Nil(t, b)
			}
		})
	}
}

func TestBuildsArtifacts(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	m.Reply(200, "PK\x03\x04zipdata", "Content-Type", "application/octet-stream", "Content-Disposition", "attachment; filename=artifacts.zip")
	var buf bytes.Buffer
	resp, err := c.Builds.Artifacts(ctx, "group/my.project", 69, &buf)
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "PK\x03\x04zipdata", buf.String())
	rec := m.AssertRequest("GET", "projects/group%2Fmy%2Eproject/builds/69/artifacts", nil)
	assert.Equal(t, "*/*", rec.Header.Get("Accept"))

	dl, _, err := c.Builds.OpenArtifacts(ctx, 1, 69)
	require.NoError(t, err)
	body, err := io.ReadAll(dl)
	require.NoError(t, err)
	require.NoError(t, dl.Close())
	assert.Equal(t, "PK\x03\x04zipdata", string(body))
	assert.Equal(t, "artifacts.zip", dl.Filename)
	assert.Equal(t, int64(-1), dl.Size, "no Content-Length: size unknown")
	assert.Equal(t, "application/octet-stream", dl.ContentType)
	m.AssertRequest("GET", "projects/1/builds/69/artifacts", nil)

	c, m = newMockClient(t)
	m.Reply(404, `{"message":"404 Not found"}`)
	buf.Reset()
	_, err = c.Builds.Artifacts(ctx, 1, 69, &buf)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	assert.Zero(t, buf.Len(), "an error body is never written to w")
	dl, _, err = c.Builds.OpenArtifacts(ctx, 1, 69)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	assert.Nil(t, dl)

	_, err = c.Builds.Artifacts(ctx, 1, 69, nil)
	assert.Error(t, err)
	_, err = c.Builds.Artifacts(ctx, []int{1}, 69, &buf)
	assert.Error(t, err)
	_, _, err = c.Builds.OpenArtifacts(ctx, nil, 69)
	assert.Error(t, err)
	//lint:ignore SA1012 deliberate: a nil context must be an error, not a panic
	_, _, err = c.Builds.OpenArtifacts(nil, 1, 69)
	assert.Error(t, err)
	assert.Equal(t, 2, m.Count())
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestBuildsArtifactsWriterError(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(200, "data", "Content-Type", "application/octet-stream")
	_, err := c.Builds.Artifacts(context.Background(), 1, 2, failingWriter{})
	assert.ErrorContains(t, err, "disk full")
}

func TestBuildsTrace(t *testing.T) {
	ctx := context.Background()
	c, m := newMockClient(t)
	m.Reply(200, "$ make test\nok\n", "Content-Type", "text/plain", "Content-Disposition", `infile; filename="69.log"`)
	var buf bytes.Buffer
	_, err := c.Builds.Trace(ctx, "group/my.project", 69, &buf)
	require.NoError(t, err)
	assert.Equal(t, "$ make test\nok\n", buf.String())
	m.AssertRequest("GET", "projects/group%2Fmy%2Eproject/builds/69/trace", nil)

	dl, _, err := c.Builds.OpenTrace(ctx, 1, 69)
	require.NoError(t, err)
	defer dl.Close()
	assert.Equal(t, "69.log", dl.Filename)
	assert.Equal(t, "text/plain", dl.ContentType)
	m.AssertRequest("GET", "projects/1/builds/69/trace", nil)

	c, m = newMockClient(t)
	m.Reply(404, `{"message":"404 Not found"}`)
	_, err = c.Builds.Trace(ctx, 1, 69, &buf)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, _, err = c.Builds.OpenTrace(ctx, 1, 69)
	assert.ErrorIs(t, err, collab.ErrNotFound)
}

// TestRedirectHeadersInNetHTTP records why downloads need withSafeRedirects:
// net/http copies custom headers such as PRIVATE-TOKEN to any redirect target.
func TestRedirectHeadersInNetHTTP(t *testing.T) {
	seen := make(chan http.Header, 1)
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen <- r.Header.Clone() }))
	defer storage.Close()
	api := httptest.NewServer(http.RedirectHandler(storage.URL+"/blob", http.StatusFound))
	defer api.Close()
	req, err := http.NewRequest(http.MethodGet, api.URL, nil)
	require.NoError(t, err)
	req.Header.Set("PRIVATE-TOKEN", testToken)
	resp, err := api.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, testToken, (<-seen).Get("PRIVATE-TOKEN"), "net/http forwards custom headers across hosts")
}

func TestBuildsArtifactsRedirectDropsCredentials(t *testing.T) {
	var storageHeader http.Header
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		storageHeader = r.Header.Clone()
		w.Header().Set("Content-Disposition", "attachment; filename=stored.zip")
		_, _ = io.WriteString(w, "stored bytes")
	}))
	defer storage.Close()
	var apiHeader http.Header
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apiHeader = r.Header.Clone()
		switch r.URL.Path {
		case "/api/v3/projects/1/builds/2/artifacts":
			http.Redirect(w, r, storage.URL+"/blob/2?sig=abc", http.StatusFound)
		case "/api/v3/projects/1/builds/3/artifacts": // same origin: credentials stay
			http.Redirect(w, r, "/api/v3/projects/1/builds/3/trace", http.StatusFound)
		default:
			_, _ = io.WriteString(w, "same origin")
		}
	}))
	defer api.Close()
	c, err := collab.NewClient(api.URL, collab.WithPrivateToken(testToken), collab.WithoutRetries(), collab.WithHTTPClient(api.Client()))
	require.NoError(t, err)
	c = c.Sudo("alice")
	ctx := context.Background()

	var buf bytes.Buffer
	_, err = c.Builds.Artifacts(ctx, 1, 2, &buf)
	require.NoError(t, err)
	assert.Equal(t, "stored bytes", buf.String())
	assert.Equal(t, testToken, apiHeader.Get("PRIVATE-TOKEN"))
	assert.Empty(t, storageHeader.Get("PRIVATE-TOKEN"), "token must not reach another host")
	assert.Empty(t, storageHeader.Get("SUDO"))

	dl, _, err := c.Builds.OpenArtifacts(ctx, 1, 2)
	require.NoError(t, err)
	defer dl.Close()
	assert.Equal(t, "stored.zip", dl.Filename)
	assert.Empty(t, storageHeader.Get("PRIVATE-TOKEN"))

	buf.Reset()
	_, err = c.Builds.Artifacts(ctx, 1, 3, &buf)
	require.NoError(t, err)
	assert.Equal(t, "same origin", buf.String())
	assert.Equal(t, testToken, apiHeader.Get("PRIVATE-TOKEN"), "a same-origin redirect keeps the token")
	assert.Equal(t, "alice", apiHeader.Get("SUDO"))
}

func TestBuildsRedirectMockHosts(t *testing.T) {
	c, m := newMockClient(t, collab.WithOAuthToken("oauth-secret"))
	m.Reply(302, "", "Location", "https://storage.collab.example.com/blob/9")
	m.Reply(200, "blob", "Content-Type", "application/octet-stream")
	var buf bytes.Buffer
	_, err := c.Builds.Artifacts(context.Background(), 1, 9, &buf)
	require.NoError(t, err)
	assert.Equal(t, "blob", buf.String())
	require.Equal(t, 2, m.Count())
	first, second := m.Calls()[0], m.Calls()[1]
	assert.Equal(t, "Bearer oauth-secret", first.Header.Get("Authorization"))
	// net/http would keep Authorization for a subdomain; storage is not the API.
	assert.Empty(t, second.Header.Get("Authorization"))
	assert.Empty(t, second.Header.Get("PRIVATE-TOKEN"))

	// A redirect loop on the API itself stops.
	c, m = newMockClient(t)
	m.Reply(302, "", "Location", "https://collab.example.com/api/v3/projects/1/builds/9/artifacts")
	_, err = c.Builds.Artifacts(context.Background(), 1, 9, &buf)
	assert.ErrorContains(t, err, "redirects")
	assert.Equal(t, 10, m.Count())
	for _, call := range m.Calls() {
		assert.Equal(t, testToken, call.Header.Get("PRIVATE-TOKEN"))
	}

	// A caller's own redirect policy still runs, after the credentials are gone.
	var policySaw http.Header
	hc := &http.Client{Transport: nil, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		policySaw = req.Header.Clone()
		return http.ErrUseLastResponse
	}}
	_, m = newMockClient(t)
	hc.Transport = m.Client().Transport
	c, err = collab.NewClient("https://collab.example.com", collab.WithPrivateToken(testToken), collab.WithHTTPClient(hc), collab.WithoutRetries())
	require.NoError(t, err)
	m.Reply(302, `{"message":"302 Found"}`, "Location", "https://elsewhere.example.net/x")
	_, err = c.Builds.Artifacts(context.Background(), 1, 9, &buf)
	assert.Error(t, err, "a 302 the policy stops at is not a download")
	require.NotNil(t, policySaw)
	assert.Empty(t, policySaw.Get("PRIVATE-TOKEN"))
}

// heapProbe is an io.Writer that checksums what it is given and, every few
// MiB, records the live heap (HeapInuse after a GC).
type heapProbe struct {
	n, next int64
	crc     uint32
	maxHeap uint64
}

const heapProbeEvery = 4 << 20

func (p *heapProbe) Write(b []byte) (int, error) {
	p.crc = crc32.Update(p.crc, crc32.IEEETable, b)
	p.n += int64(len(b))
	if p.n >= p.next {
		p.maxHeap = max(p.maxHeap, liveHeap())
		p.next += heapProbeEvery
	}
	return len(b), nil
}

func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// patternSource repeats 0..250, so that any chunk of the generated artifact
// is one copy from it.
var patternSource = func() []byte {
	b := make([]byte, 64<<10+251)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}()

// fillPattern writes the generated artifact's bytes at offset off into b
// (len(b) <= 64 KiB).
func fillPattern(b []byte, off int) { copy(b, patternSource[off%251:]) }

func TestBuildsArtifactsStreamWithoutBuffering(t *testing.T) {
	const size = 64 << 20
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	var want uint32
	for off := 0; off < size; off += chunk {
		fillPattern(buf, off)
		want = crc32.Update(want, crc32.IEEETable, buf)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("PRIVATE-TOKEN") != testToken {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", "attachment; filename=big.zip")
		w.Header().Set("Content-Length", strconv.Itoa(size))
		b := make([]byte, chunk)
		for off := 0; off < size; off += chunk {
			fillPattern(b, off)
			if _, err := w.Write(b); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c, err := collab.NewClient(srv.URL, collab.WithPrivateToken(testToken), collab.WithHTTPClient(srv.Client()), collab.WithoutRetries())
	require.NoError(t, err)
	ctx := context.Background()

	check := func(t *testing.T, base uint64, p *heapProbe) {
		assert.EqualValues(t, size, p.n)
		assert.Equal(t, want, p.crc, "content")
		assert.Greater(t, p.next, int64(size/2), "the heap was sampled during the copy")
		grown := int64(p.maxHeap) - int64(base)
		t.Logf("heap in use grew by at most %d KiB over a %d MiB download", grown>>10, size>>20)
		assert.Less(t, grown, int64(8<<20), "the download must not be buffered")
	}
	t.Run("Artifacts", func(t *testing.T) {
		p := &heapProbe{}
		base := liveHeap()
		_, err := c.Builds.Artifacts(ctx, 1, 2, p)
		require.NoError(t, err)
		check(t, base, p)
	})
	t.Run("OpenArtifacts", func(t *testing.T) {
		p := &heapProbe{}
		base := liveHeap()
		dl, _, err := c.Builds.OpenArtifacts(ctx, 1, 2)
		require.NoError(t, err)
		assert.Equal(t, "big.zip", dl.Filename)
		assert.EqualValues(t, size, dl.Size)
		_, err = io.Copy(p, dl)
		require.NoError(t, err)
		require.NoError(t, dl.Close())
		check(t, base, p)
	})
}

// --- integration tests (collabtest) ---

// buildsWorld is a private project with builds, an admin client, and users at
// each access level.
type buildsWorld struct {
	c                    *collab.Client
	srv                  *collabtest.Server
	project              *collab.Project
	pid                  int // project.ID
	commit               string
	reporter, dev, guest *collab.Client
	stranger             *collab.Client
}

func newBuildsWorld(t *testing.T, visibility collab.VisibilityLevel) *buildsWorld {
	t.Helper()
	c, srv := newFakeClient(t)
	w := &buildsWorld{c: c, srv: srv}
	w.project = srv.Seed.Project(srv.Admin, "builds demo", visibility)
	w.pid = w.project.ID
	w.commit = srv.Seed.Branch(w.project, "master").Commit.ID
	for _, u := range []struct {
		name  string
		level collab.AccessLevel
		dst   **collab.Client
	}{{"reporter", 20, &w.reporter}, {"dev", 30, &w.dev}, {"guest", 10, &w.guest}, {"stranger", 0, &w.stranger}} {
		usr := srv.Seed.User(u.name)
		if u.level > 0 {
			srv.Seed.Member(w.project, usr, u.level)
		}
		*u.dst = clientAs(t, srv, usr.Token)
	}
	return w
}

func TestFakeBuildsListAndGet(t *testing.T) {
	w := newBuildsWorld(t, 0)
	ctx := context.Background()
	other := w.srv.Seed.Branch(w.project, "feature").Commit.ID
	b1 := w.srv.Seed.Build(w.project, collabtest.BuildSpec{Name: "rspec", Status: "success", Coverage: collab.Ptr(88.5)}).ID
	b2 := w.srv.Seed.Build(w.project, collabtest.BuildSpec{Name: "lint", Status: "failed"}).ID
	b3 := w.srv.Seed.Build(w.project, collabtest.BuildSpec{Name: "deploy", Ref: "feature"}).ID
	b4 := w.srv.Seed.Build(w.project, collabtest.BuildSpec{Name: "docs", Status: "skipped"}).ID

	ids := func(bs []*collab.Build) (out []int) {
		for _, b := range bs {
			out = append(out, b.ID)
		}
		return out
	}
	bs, resp, err := w.c.Builds.List(ctx, w.pid, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{b4, b3, b2, b1}, ids(bs), "newest first")
	assert.Equal(t, 4, resp.TotalItems)

	bs, _, err = w.c.Builds.List(ctx, "root/builds-demo", &collab.ListBuildsOptions{Scope: collab.BuildScopes{collab.BuildSuccess, collab.BuildPending}})
	require.NoError(t, err)
	assert.Equal(t, []int{b3, b1}, ids(bs))
	bs, _, err = w.c.Builds.List(ctx, w.pid, &collab.ListBuildsOptions{Scope: collab.BuildScopes{collab.BuildSkipped}})
	require.NoError(t, err)
	assert.Equal(t, []int{b4}, ids(bs))

	bs, resp, err = w.c.Builds.List(ctx, w.pid, &collab.ListBuildsOptions{ListOptions: collab.ListOptions{Page: 2, PerPage: 3}})
	require.NoError(t, err)
	assert.Equal(t, []int{b1}, ids(bs))
	assert.Equal(t, 2, resp.CurrentPage)
	assert.Equal(t, 2, resp.TotalPages)

	bs, _, err = w.c.Builds.ListForCommit(ctx, w.pid, w.commit, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{b4, b2, b1}, ids(bs))
	bs, _, err = w.c.Builds.ListForCommit(ctx, w.pid, w.commit, &collab.ListBuildsForCommitOptions{Scope: collab.BuildScopes{collab.BuildFailed, collab.BuildSkipped}})
	require.NoError(t, err)
	assert.Equal(t, []int{b4, b2}, ids(bs))
	bs, _, err = w.c.Builds.ListForCommit(ctx, w.pid, other, nil)
	require.NoError(t, err)
	assert.Equal(t, []int{b3}, ids(bs))
	_, _, err = w.c.Builds.ListForCommit(ctx, w.pid, strings.Repeat("0", 40), nil)
	assert.ErrorIs(t, err, collab.ErrNotFound)

	got, _, err := w.c.Builds.Get(ctx, w.pid, b1)
	require.NoError(t, err)
	assert.Equal(t, b1, got.ID)
	assert.Equal(t, "rspec", got.Name)
	assert.Equal(t, collab.BuildSuccess, got.Status)
	assert.Equal(t, collab.Ptr(88.5), got.Coverage)
	assert.Equal(t, w.commit, got.Commit.ID)
	assert.Equal(t, w.commit[:8], got.Commit.ShortID)
	require.NotNil(t, got.User)
	assert.Equal(t, "root", got.User.Username)
	assert.True(t, got.User.IsAdmin)
	assert.NotNil(t, got.StartedAt)
	assert.NotNil(t, got.FinishedAt)
	assert.Nil(t, got.ArtifactsFile)

	_, _, err = w.c.Builds.Get(ctx, w.pid, 999999)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	otherPID := w.srv.Seed.Project(w.srv.Admin, "other", collab.PrivateVisibility).ID
	_, _, err = w.c.Builds.Get(ctx, otherPID, b1)
	assert.ErrorIs(t, err, collab.ErrNotFound, "a build of another project is not found")
}

func TestFakeBuildsAll(t *testing.T) {
	w := newBuildsWorld(t, 0)
	ctx := context.Background()
	var want []int
	for i := 0; i < 105; i++ {
		status := "success"
		if i%2 == 1 {
			status = "failed"
		}
		id := w.srv.Seed.Build(w.project, collabtest.BuildSpec{Status: status}).ID
		if status == "failed" {
			want = append([]int{id}, want...)
		}
	}
	var got []int
	for b, err := range w.c.Builds.All(ctx, w.pid, &collab.ListBuildsOptions{Scope: collab.BuildScopes{collab.BuildFailed}}) {
		require.NoError(t, err)
		got = append(got, b.ID)
	}
	assert.Equal(t, want, got)

	n := 0
	for b, err := range w.c.Builds.AllForCommit(ctx, w.pid, w.commit, nil) {
		require.NoError(t, err)
		require.NotNil(t, b)
		n++
	}
	assert.Equal(t, 105, n, "two pages")

	for _, err := range w.stranger.Builds.All(ctx, w.pid, nil) {
		assert.ErrorIs(t, err, collab.ErrNotFound)
	}
}

func TestFakeBuildsScopeWireForms(t *testing.T) {
	w := newBuildsWorld(t, 0)
	ctx := context.Background()
	w.srv.Seed.Build(w.project, collabtest.BuildSpec{Status: "running"})
	get := func(rawQuery string) (*collab.Response, error) {
		req, err := w.c.NewRequest(ctx, http.MethodGet, "projects/"+strconv.Itoa(w.pid)+"/builds?"+rawQuery, nil)
		require.NoError(t, err)
		var out []*collab.Build
		return w.c.Do(req, &out)
	}
	_, err := get("scope[]=running")
	assert.ErrorIs(t, err, collab.ErrBadRequest, "the Rails array form is rejected")
	var er *collab.ErrorResponse
	require.ErrorAs(t, err, &er)
	assert.Equal(t, "Scope contains invalid value(s)", er.Message)
	_, err = get("scope=done")
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	_, err = get("scope=running&scope[0]=failed")
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	_, err = get("scope[0]=running&scope[1]=bogus")
	assert.ErrorIs(t, err, collab.ErrBadRequest)
	resp, err := get("scope=")
	require.NoError(t, err)
	assert.Equal(t, 1, resp.TotalItems, "an empty scope means all")
}

func TestFakeBuildsAccess(t *testing.T) {
	ctx := context.Background()
	w := newBuildsWorld(t, 0)
	bid := w.srv.Seed.Build(w.project, collabtest.BuildSpec{Status: "running", Artifacts: []byte("zip"), Trace: "log"}).ID

	// Reporters read; guests of a private project may not; strangers do not see it.
	_, _, err := w.reporter.Builds.Get(ctx, w.pid, bid)
	assert.NoError(t, err)
	_, err = w.reporter.Builds.Artifacts(ctx, w.pid, bid, io.Discard)
	assert.NoError(t, err)
	_, _, err = w.guest.Builds.List(ctx, w.pid, nil)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	_, err = w.guest.Builds.Trace(ctx, w.pid, bid, io.Discard)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	_, _, err = w.stranger.Builds.Get(ctx, w.pid, bid)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, _, err = w.stranger.Builds.Cancel(ctx, w.pid, bid)
	assert.ErrorIs(t, err, collab.ErrNotFound)

	// Only developers and above act.
	for name, cl := range map[string]*collab.Client{"reporter": w.reporter, "guest": w.guest} {
		_, _, err = cl.Builds.Cancel(ctx, w.pid, bid)
		assert.ErrorIs(t, err, collab.ErrForbidden, name)
		_, _, err = cl.Builds.Retry(ctx, w.pid, bid)
		assert.ErrorIs(t, err, collab.ErrForbidden, name)
		_, _, err = cl.Builds.Erase(ctx, w.pid, bid)
		assert.ErrorIs(t, err, collab.ErrForbidden, name)
		_, _, err = cl.Builds.KeepArtifacts(ctx, w.pid, bid)
		assert.ErrorIs(t, err, collab.ErrForbidden, name)
	}
	b, resp, err := w.dev.Builds.Cancel(ctx, w.pid, bid)
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, collab.BuildCanceled, b.Status)

	// Public projects: anyone signed in reads, nobody outside acts.
	pub := newBuildsWorld(t, 20)
	pbid := pub.srv.Seed.Build(pub.project, collabtest.BuildSpec{Status: "success"}).ID
	bs, _, err := pub.stranger.Builds.List(ctx, pub.pid, nil)
	require.NoError(t, err)
	assert.Len(t, bs, 1)
	_, _, err = pub.stranger.Builds.Retry(ctx, pub.pid, pbid)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	_, _, err = clientAs(t, pub.srv, "bad-token").Builds.Get(ctx, pub.pid, pbid)
	assert.ErrorIs(t, err, collab.ErrUnauthorized)
}

func TestFakeBuildsCancelAndRetry(t *testing.T) {
	ctx := context.Background()
	w := newBuildsWorld(t, 0)
	pending := w.srv.Seed.Build(w.project, collabtest.BuildSpec{Name: "rspec", Stage: "test", Commands: "make\nmake test"}).ID
	running := w.srv.Seed.Build(w.project, collabtest.BuildSpec{Status: "pending"}).ID
	w.srv.SetBuildStatus(running, "running")

	for _, id := range []int{pending, running} {
		b, resp, err := w.c.Builds.Cancel(ctx, w.pid, id)
		require.NoError(t, err)
		assert.Equal(t, http.StatusCreated, resp.StatusCode)
		assert.Equal(t, collab.BuildCanceled, b.Status)
		assert.NotNil(t, b.FinishedAt)
	}
	_, _, err := w.c.Builds.Cancel(ctx, w.pid, pending)
	assert.ErrorIs(t, err, collab.ErrForbidden, "a finished build cannot be canceled")
	_, _, err = w.c.Builds.Cancel(ctx, w.pid, 424242)
	assert.ErrorIs(t, err, collab.ErrNotFound)

	old, _, err := w.c.Builds.Get(ctx, w.pid, pending)
	require.NoError(t, err)
	nb, resp, err := w.dev.Builds.Retry(ctx, w.pid, pending)
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.NotEqual(t, pending, nb.ID, "retry makes a new build")
	assert.Equal(t, collab.BuildPending, nb.Status)
	assert.Nil(t, nb.StartedAt)
	assert.Nil(t, nb.FinishedAt)
	assert.Equal(t, old.Name, nb.Name)
	assert.Equal(t, old.Stage, nb.Stage)
	assert.Equal(t, old.Ref, nb.Ref)
	assert.Equal(t, old.Commit.ID, nb.Commit.ID)
	assert.Equal(t, "dev", nb.User.Username, "the retrying user owns the new build")

	again, _, err := w.c.Builds.Get(ctx, w.pid, pending)
	require.NoError(t, err)
	assert.Equal(t, collab.BuildCanceled, again.Status, "the old build is left as it was")

	_, _, err = w.c.Builds.Retry(ctx, w.pid, nb.ID)
	assert.ErrorIs(t, err, collab.ErrForbidden, "a pending build is not retryable")
	_, _, err = w.c.Builds.Retry(ctx, w.pid, 424242)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	bs, _, err := w.c.Builds.List(ctx, w.pid, &collab.ListBuildsOptions{Scope: collab.BuildScopes{collab.BuildPending}})
	require.NoError(t, err)
	require.Len(t, bs, 1)
	assert.Equal(t, nb.ID, bs[0].ID)
}

func TestFakeBuildsDownloads(t *testing.T) {
	ctx := context.Background()
	w := newBuildsWorld(t, 0)
	zip := []byte("PK\x03\x04 pretend zip")
	bid := w.srv.Seed.Build(w.project, collabtest.BuildSpec{Status: "success", Artifacts: zip, ArtifactsName: "my build.zip", Trace: "$ make\nok\n"}).ID
	bare := w.srv.Seed.Build(w.project, collabtest.BuildSpec{Status: "success"}).ID

	b, _, err := w.c.Builds.Get(ctx, w.pid, bid)
	require.NoError(t, err)
	assert.Equal(t, &collab.ArtifactsFile{Filename: "my build.zip", Size: int64(len(zip))}, b.ArtifactsFile)

	var buf bytes.Buffer
	_, err = w.c.Builds.Artifacts(ctx, w.pid, bid, &buf)
	require.NoError(t, err)
	assert.Equal(t, zip, buf.Bytes())

	dl, resp, err := w.c.Builds.OpenArtifacts(ctx, "root/builds-demo", bid)
	require.NoError(t, err)
	got, err := io.ReadAll(dl)
	require.NoError(t, err)
	require.NoError(t, dl.Close())
	assert.Equal(t, zip, got)
	assert.Equal(t, "my build.zip", dl.Filename)
	assert.Equal(t, int64(len(zip)), dl.Size)
	assert.Equal(t, "application/octet-stream", dl.ContentType)
	assert.Equal(t, "attachment; filename=my build.zip", resp.Header.Get("Content-Disposition"))

	buf.Reset()
	_, err = w.c.Builds.Trace(ctx, w.pid, bid, &buf)
	require.NoError(t, err)
	assert.Equal(t, "$ make\nok\n", buf.String())
	dl, _, err = w.c.Builds.OpenTrace(ctx, w.pid, bid)
	require.NoError(t, err)
	require.NoError(t, dl.Close())
	assert.Equal(t, strconv.Itoa(bid)+".log", dl.Filename)
	assert.Equal(t, "text/plain", dl.ContentType)

	_, err = w.c.Builds.Artifacts(ctx, w.pid, bare, &buf)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, _, err = w.c.Builds.OpenTrace(ctx, w.pid, bare)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	_, _, err = w.c.Builds.OpenArtifacts(ctx, w.pid, 424242)
	assert.ErrorIs(t, err, collab.ErrNotFound)
}

func TestFakeBuildsEraseAndKeep(t *testing.T) {
	ctx := context.Background()
	w := newBuildsWorld(t, 0)
	bid := w.srv.Seed.Build(w.project, collabtest.BuildSpec{Status: "failed", Artifacts: []byte("zip"), Trace: "log"}).ID
	running := w.srv.Seed.Build(w.project, collabtest.BuildSpec{Status: "running", Artifacts: []byte("zip")}).ID
	empty := w.srv.Seed.Build(w.project, collabtest.BuildSpec{Status: "success"}).ID

	b, resp, err := w.dev.Builds.KeepArtifacts(ctx, w.pid, bid)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, bid, b.ID)
	assert.Nil(t, b.ArtifactsFile, "keep returns download_url in place of artifacts_file")
	assert.Nil(t, b.DownloadURL)
	_, _, err = w.c.Builds.KeepArtifacts(ctx, w.pid, empty)
	assert.ErrorIs(t, err, collab.ErrNotFound, "nothing to keep")

	_, _, err = w.c.Builds.Erase(ctx, w.pid, running)
	assert.ErrorIs(t, err, collab.ErrForbidden, "a running build is not erasable")
	_, _, err = w.c.Builds.Erase(ctx, w.pid, empty)
	assert.ErrorIs(t, err, collab.ErrForbidden, "nothing to erase")
	_, _, err = w.c.Builds.Erase(ctx, w.pid, 424242)
	assert.ErrorIs(t, err, collab.ErrNotFound)

	b, resp, err = w.dev.Builds.Erase(ctx, w.pid, bid)
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, resp.StatusCode)
	assert.Equal(t, bid, b.ID)
	assert.Nil(t, b.ArtifactsFile)
	assert.Nil(t, b.DownloadURL)

	_, err = w.c.Builds.Artifacts(ctx, w.pid, bid, io.Discard)
	assert.ErrorIs(t, err, collab.ErrNotFound, "erased artifacts are gone")
	_, err = w.c.Builds.Trace(ctx, w.pid, bid, io.Discard)
	assert.ErrorIs(t, err, collab.ErrNotFound, "erased trace is gone")
	b, _, err = w.c.Builds.Get(ctx, w.pid, bid)
	require.NoError(t, err)
	assert.Nil(t, b.ArtifactsFile)
	_, _, err = w.c.Builds.Erase(ctx, w.pid, bid)
	assert.ErrorIs(t, err, collab.ErrForbidden, "erasing twice")
	_, _, err = w.c.Builds.KeepArtifacts(ctx, w.pid, bid)
	assert.ErrorIs(t, err, collab.ErrNotFound)
}
