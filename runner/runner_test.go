package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/mocktest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustTime(t *testing.T, s string) *collab.Time {
	t.Helper()
	tm, err := collab.ParseTime(s)
	require.NoError(t, err)
	return &tm
}

func TestNewClient(t *testing.T) {
	c, err := NewClient("https://collab.example.com/")
	require.NoError(t, err)
	assert.Equal(t, "https://collab.example.com/ci/api/v1/", c.API().BaseURL().String())

	// A base URL that already names an API prefix is normalised.
	c, err = NewClient("https://collab.example.com/api/v3")
	require.NoError(t, err)
	assert.Equal(t, "https://collab.example.com/ci/api/v1/", c.API().BaseURL().String())

	_, err = NewClient("ftp://collab.example.com")
	assert.Error(t, err)
	_, err = NewClient("https://collab.example.com", collab.WithRetry(collab.RetryPolicy{MaxRetries: -1}))
	assert.Error(t, err)
}

func TestRequestBuild(t *testing.T) {
	c, m := newMockClient(t)
	m.ReplyFile(http.StatusCreated, "register.json")
	b, err := c.RequestBuild(context.Background(), testRunnerToken, &Info{
		Name: "ci-runner-3", Version: "1.4.2", Revision: "0fd4c2e", Platform: "linux", Architecture: "amd64",
	})
	require.NoError(t, err)
	rec := m.assertCall(http.MethodPost, "builds/register", url.Values{
		"token": {testRunnerToken}, "info[name]": {"ci-runner-3"}, "info[version]": {"1.4.2"},
		"info[revision]": {"0fd4c2e"}, "info[platform]": {"linux"}, "info[architecture]": {"amd64"},
	})
	assert.Empty(t, rec.Query, "the runner token never goes in the URL")
	assert.Empty(t, rec.Header.Get("BUILD-TOKEN"))

	assert.Equal(t, []string{"retry_hint"}, slices.Collect(maps.Keys(b.Options.Extra)), "the options Build does not model")
	assert.JSONEq(t, `{"max": 2}`, string(b.Options.Extra["retry_hint"]))
	b.Options.Extra = nil
	want := &Build{
		BuildInfo: BuildInfo{
			ID: 1187, Ref: "v1.4.0", Tag: true, SHA: "a91957a858320c0e17f3a0eca7cfacbff50ea29a", Status: "running",
			Name: "rspec:unit", Token: collab.Secret(testBuildToken), Stage: "test", ProjectID: 42, ProjectName: "Widget Factory",
			ArtifactsFile: &collab.ArtifactsFile{Filename: "artifacts.zip", Size: 1048576},
		},
		Commands:  "bundle install --deployment\nbundle exec rspec spec/unit",
		RepoURL:   RepoURL("https://gitlab-ci-token:" + testBuildToken + "@collab.example.com/acme/widget-factory.git"),
		BeforeSHA: "0000000000000000000000000000000000000000", AllowGitFetch: true,
		ArtifactsExpireAt: mustTime(t, "2016-07-29T10:15:00.000Z"),
		Options: BuildOptions{
			Image: "ruby:2.3", Services: []string{"postgres:9.5", "redis:3"},
			Artifacts:    &ArtifactsOptions{Name: "rspec-report", Paths: []string{"coverage/", "rspec.xml"}, When: "always", ExpireIn: "7 days"},
			Cache:        &CacheOptions{Key: "v1.4.0", Untracked: true, Paths: []string{"vendor/bundle"}},
			Dependencies: []string{"build:gems"}, AfterScript: []string{"rm -rf tmp/cache"},
		},
		Timeout: 3600,
		Variables: []Variable{
			{Key: "CI", Value: "true", Public: true},
			{Key: "CI_BUILD_TOKEN", Value: testBuildToken, Public: false},
			{Key: "DATABASE_PASSWORD", Value: "hunter2-s3cr3t", Public: false},
		},
		DependsOnBuilds: []DependentBuild{
			{BuildInfo: BuildInfo{ID: 1185, Ref: "v1.4.0", Tag: true, SHA: "a91957a858320c0e17f3a0eca7cfacbff50ea29a", Status: "success", Name: "build:gems",
				Token: collab.Secret(testBuildToken), Stage: "build", ProjectID: 42, ProjectName: "Widget Factory",
				ArtifactsFile: &collab.ArtifactsFile{Filename: "gems.zip", Size: 2048}}},
			{BuildInfo: BuildInfo{ID: 1186, Ref: "v1.4.0", Tag: true, SHA: "a91957a858320c0e17f3a0eca7cfacbff50ea29a", Status: "success", Name: "lint",
				Token: collab.Secret(testBuildToken), Stage: "build", ProjectID: 42, ProjectName: "Widget Factory"}},
		},
	}
	assert.Equal(t, want, b)
}

func TestRequestBuildWithoutInfo(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(http.StatusCreated, `{"id": 3, "token": "x", "options": null, "variables": [], "depends_on_builds": []}`)
	b, err := c.RequestBuild(context.Background(), testRunnerToken, nil)
	require.NoError(t, err)
	m.assertCall(http.MethodPost, "builds/register", url.Values{"token": {testRunnerToken}})
	assert.Equal(t, 3, b.ID)
	assert.Equal(t, BuildOptions{}, b.Options)
}

func TestRequestBuildNothingToDo(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusNoContent} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			c, m := newMockClient(t)
			body := `{"message":"404 Not found"}`
			if status == http.StatusNoContent {
				body = ""
			}
			m.Reply(status, body)
			b, err := c.RequestBuild(context.Background(), testRunnerToken, nil)
			assert.NoError(t, err)
			assert.Nil(t, b)
		})
	}
}

func TestRequestBuildErrors(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(http.StatusForbidden, `{"message":"403 Forbidden"}`)
	b, err := c.RequestBuild(context.Background(), testRunnerToken, nil)
	assert.Nil(t, b)
	require.ErrorIs(t, err, collab.ErrForbidden)
	assert.NotContains(t, err.Error(), testRunnerToken)

	m.Reply(http.StatusCreated, `null`)
	_, err = c.RequestBuild(context.Background(), testRunnerToken, nil)
	assert.ErrorContains(t, err, "null")

	m.Reply(http.StatusInternalServerError, `<html>boom</html>`)
	_, err = c.RequestBuild(context.Background(), testRunnerToken, nil)
	assert.ErrorIs(t, err, collab.ErrServer)

	n := m.Count()
	_, err = c.RequestBuild(context.Background(), "", nil)
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	assert.ErrorContains(t, err, "runnerToken: is empty")
	//lint:ignore SA1012 a nil context is an error, not a panic
	_, err = c.RequestBuild(nil, testRunnerToken, nil)
	assert.Error(t, err)
	assert.Equal(t, n, m.Count(), "nothing sent")
}

func TestBuildOptionsVariants(t *testing.T) {
	var o BuildOptions
	// Newer servers send image and services as objects; a string where an
	// object is expected; none of it fails the decode.
	require.NoError(t, json.Unmarshal([]byte(`{
		"image": {"name": "ruby:2.3", "entrypoint": [""]},
		"services": [{"name": "postgres", "alias": "db"}],
		"artifacts": "everything",
		"cache": ["x"],
		"dependencies": "build",
		"after_script": "echo done"
	}`), &o))
	assert.Empty(t, o.Image)
	assert.Nil(t, o.Services)
	assert.Nil(t, o.Artifacts)
	assert.Nil(t, o.Cache)
	assert.Nil(t, o.Dependencies)
	assert.Nil(t, o.AfterScript)
	assert.JSONEq(t, `{"name": "ruby:2.3", "entrypoint": [""]}`, string(o.Extra["image"]))
	require.NoError(t, json.Unmarshal([]byte(`"not an object"`), &o))
	assert.Equal(t, BuildOptions{}, o)
	var b Build
	require.NoError(t, json.Unmarshal([]byte(`{"id": 1, "options": [], "timeout": null}`), &b))
	assert.Equal(t, 1, b.ID)
}

func TestSecretsAreRedacted(t *testing.T) {
	c, m := newMockClient(t)
	m.ReplyFile(http.StatusCreated, "register.json")
	b, err := c.RequestBuild(context.Background(), testRunnerToken, nil)
	require.NoError(t, err)

	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		for _, v := range []any{b, *b, b.Token, b.RepoURL, b.Variables, b.DependsOnBuilds} {
			out := fmt.Sprintf(verb, v)
			assert.NotContains(t, out, testBuildToken, verb)
			assert.NotContains(t, out, "hunter2-s3cr3t", verb)
		}
	}
	assert.Contains(t, fmt.Sprintf("%v", b.Variables), "{Key:CI Value:true Public:true}", "public values print")
	assert.Equal(t, "https://gitlab-ci-token:[redacted]@collab.example.com/acme/widget-factory.git", b.RepoURL.String())
	assert.Equal(t, redacted, RepoURL("http://[::1").String())
	assert.Equal(t, `"`+redacted+`"`, b.Token.GoString())
	assert.Equal(t, redacted, b.Token.String())

	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&logs, nil), slog.NewTextHandler(&logs, nil)} {
		l := slog.New(h)
		l.Info("took build", "build", b, "token", b.Token, "repo", b.RepoURL, "var", b.Variables[2], "public", b.Variables[0])
		l.Info("nil build", "build", (*Build)(nil))
	}
	assert.NotContains(t, logs.String(), testBuildToken)
	assert.NotContains(t, logs.String(), "hunter2-s3cr3t")
	assert.Contains(t, logs.String(), "rspec:unit")
	assert.Contains(t, logs.String(), `"value":"true"`)

	// JSON writes neither token, in its field or in the repository URL.
	enc, err := json.Marshal(b)
	require.NoError(t, err)
	assert.NotContains(t, string(enc), testBuildToken)
	assert.Contains(t, string(enc), `"token":"`+redacted+`"`)
	assert.Contains(t, string(enc), `"repo_url":"https://gitlab-ci-token:`+redacted+`@collab.example.com/acme/widget-factory.git"`)
}

func TestUpdateBuild(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(http.StatusOK, `{"id": 5, "status": "success"}`)
	require.NoError(t, c.UpdateBuild(context.Background(), 5, testRunnerToken, collab.BuildSuccess, nil))
	m.assertCall(http.MethodPut, "builds/5", url.Values{"token": {testRunnerToken}, "state": {"success"}})

	trace := "line 1\nline 2\n"
	require.NoError(t, c.UpdateBuild(context.Background(), 5, testRunnerToken, collab.BuildRunning, &trace))
	m.assertCall(http.MethodPut, "builds/5", url.Values{"token": {testRunnerToken}, "state": {"running"}, "trace": {trace}})

	empty := ""
	require.NoError(t, c.UpdateBuild(context.Background(), 5, testRunnerToken, "", &empty))
	m.assertCall(http.MethodPut, "builds/5", url.Values{"token": {testRunnerToken}, "trace": {""}})

	m.Reply(http.StatusNotFound, `{"message":"404 Not found"}`)
	err := c.UpdateBuild(context.Background(), 5, testRunnerToken, collab.BuildFailed, nil)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	assert.NotContains(t, err.Error(), testRunnerToken)
	m.Reply(http.StatusForbidden, `{"message":"403 Forbidden - Build has been erased!"}`)
	assert.ErrorIs(t, c.UpdateBuild(context.Background(), 5, testRunnerToken, collab.BuildFailed, nil), collab.ErrForbidden)

	n := m.Count()
	assert.Error(t, c.UpdateBuild(context.Background(), 5, "", collab.BuildFailed, nil))
	assert.Equal(t, n, m.Count())
}

func TestAppendTrace(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(http.StatusAccepted, "", "Build-Status", "running", "Range", "0-17")
	status, n, err := c.AppendTrace(context.Background(), 9, testBuildToken, 10, []byte("hello\n\x00"))
	require.NoError(t, err)
	assert.Equal(t, collab.BuildRunning, status)
	assert.Equal(t, int64(17), n)
	rec := m.assertCall(http.MethodPatch, "builds/9/trace.txt", nil)
	assert.Equal(t, testBuildToken, rec.Header.Get("BUILD-TOKEN"))
	assert.Equal(t, "10-16", rec.Header.Get("Content-Range"))
	assert.Equal(t, "text/plain", rec.Header.Get("Content-Type"))
	assert.Equal(t, []byte("hello\n\x00"), rec.Body)

	// An empty part polls the status: a one-byte range at the offset.
	m.Reply(http.StatusAccepted, "", "Build-Status", "canceled", "Range", "0-17")
	status, n, err = c.AppendTrace(context.Background(), 9, testBuildToken, 17, nil)
	require.NoError(t, err)
	assert.Equal(t, collab.BuildCanceled, status)
	assert.Equal(t, int64(17), n)
	assert.Equal(t, "17-17", m.Last().Header.Get("Content-Range"))
	assert.Empty(t, m.Last().Body)

	// No Range header: the length is assumed from what was sent.
	m.Reply(http.StatusAccepted, "", "Build-Status", "running")
	_, n, err = c.AppendTrace(context.Background(), 9, testBuildToken, 0, []byte("abc"))
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
	assert.Equal(t, "0-2", m.Last().Header.Get("Content-Range"))

	// A malformed Range on success is a protocol error, not a panic.
	m.Reply(http.StatusAccepted, "", "Build-Status", "running", "Range", "lots")
	_, _, err = c.AppendTrace(context.Background(), 9, testBuildToken, 0, []byte("abc"))
	assert.ErrorContains(t, err, "malformed range")
}

func TestAppendTraceRangeError(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(http.StatusRequestedRangeNotSatisfiable, `{"error":"416 Range Not Satisfiable"}`, "Range", "0-42")
	_, _, err := c.AppendTrace(context.Background(), 9, testBuildToken, 50, []byte("x"))
	var re *RangeError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, int64(42), re.Length)
	assert.ErrorIs(t, err, collab.ErrRangeNotSatisfiable)
	var er *collab.ErrorResponse
	require.ErrorAs(t, err, &er)
	assert.Equal(t, "416 Range Not Satisfiable", er.Message)
	assert.Contains(t, err.Error(), "server trace length 42")
	assert.NotContains(t, err.Error(), testBuildToken)

	// A 416 without a usable Range is still a 416, but not a RangeError.
	m.Reply(http.StatusRequestedRangeNotSatisfiable, `{"error":"416 Range Not Satisfiable"}`, "Range", "0-")
	_, _, err = c.AppendTrace(context.Background(), 9, testBuildToken, 50, []byte("x"))
	assert.ErrorIs(t, err, collab.ErrRangeNotSatisfiable)
	assert.False(t, errors.As(err, &re))
}

func TestAppendTraceErrors(t *testing.T) {
	c, m := newMockClient(t)
	for status, sentinel := range map[int]error{
		http.StatusBadRequest: collab.ErrBadRequest, http.StatusForbidden: collab.ErrForbidden,
		http.StatusNotFound: collab.ErrNotFound, http.StatusBadGateway: collab.ErrServer,
	} {
		m.Reply(status, `{"message":"nope"}`)
		_, _, err := c.AppendTrace(context.Background(), 9, testBuildToken, 0, []byte("x"))
		assert.ErrorIs(t, err, sentinel, status)
	}
	n := m.Count()
	_, _, err := c.AppendTrace(context.Background(), 9, testBuildToken, -1, nil)
	assert.ErrorContains(t, err, "offset: is negative")
	_, _, err = c.AppendTrace(context.Background(), 9, "", 0, nil)
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	assert.ErrorContains(t, err, "buildToken: is empty")
	_, _, err = c.AppendTrace(context.Background(), 9, "a\nb", 0, nil)
	var ae *collab.ArgumentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "buildToken", ae.Arg)
	assert.ErrorContains(t, err, "line break")
	assert.Equal(t, n, m.Count(), "nothing sent")
}

func TestParseRange(t *testing.T) {
	for in, want := range map[string]int64{
		"0-42": 42, " 0 - 42 ": 42, "bytes 0-42": 42, "bytes=0-42": 42, "BYTES 0-7/8": 7, "0-0": 0,
	} {
		n, err := parseRange(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, n, in)
		}
	}
	for _, in := range []string{"", "-", "42", "0-", "-42", "a-b", "0-x", "1-42", "0--1", "0-99999999999999999999", "bytes", strings.Repeat("9", 100)} {
		_, err := parseRange(in)
		assert.Error(t, err, in)
	}
}

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"0-42", "bytes 0-1", "x", "0-1/2", " - "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseRange(s)
		if err == nil && n < 0 {
			t.Fatalf("negative length %d from %q", n, s)
		}
	})
}

func TestDeleteArtifacts(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(http.StatusOK, `{"id": 9}`)
	require.NoError(t, c.DeleteArtifacts(context.Background(), 9, testBuildToken))
	rec := m.assertCall(http.MethodDelete, "builds/9/artifacts", nil)
	assert.Equal(t, testBuildToken, rec.Header.Get("BUILD-TOKEN"))

	m.Reply(http.StatusForbidden, `{"message":"403 Forbidden"}`)
	assert.ErrorIs(t, c.DeleteArtifacts(context.Background(), 9, testBuildToken), collab.ErrForbidden)
	assert.ErrorContains(t, c.DeleteArtifacts(context.Background(), 9, ""), "buildToken: is empty")
}

func TestDownloadArtifacts(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(http.StatusOK, "PK\x03\x04zipdata", "Content-Type", "application/octet-stream",
		"Content-Disposition", "attachment; filename=artifacts.zip")
	var buf bytes.Buffer
	n, err := c.DownloadArtifacts(context.Background(), 9, testBuildToken, &buf)
	require.NoError(t, err)
	assert.Equal(t, int64(11), n)
	assert.Equal(t, "PK\x03\x04zipdata", buf.String())
	rec := m.assertCall(http.MethodGet, "builds/9/artifacts", nil)
	assert.Equal(t, testBuildToken, rec.Header.Get("BUILD-TOKEN"))

	m.Reply(http.StatusNotFound, `{"message":"404 Not found"}`)
	_, err = c.DownloadArtifacts(context.Background(), 9, testBuildToken, &buf)
	assert.ErrorIs(t, err, collab.ErrNotFound)
	m.Reply(http.StatusForbidden, `{"message":"403 Forbidden"}`)
	_, err = c.DownloadArtifacts(context.Background(), 9, testBuildToken, &buf)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	_, err = c.DownloadArtifacts(context.Background(), 9, testBuildToken, nil)
	assert.Error(t, err)

	// A failing writer stops the copy and reports what was written.
	m.Reply(http.StatusOK, strings.Repeat("z", 100))
	n, err = c.DownloadArtifacts(context.Background(), 9, testBuildToken, &limitedWriter{left: 10})
	assert.Error(t, err)
	assert.Equal(t, int64(10), n)
}

type limitedWriter struct{ left int }

func (w *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		n := w.left
		w.left = 0
		return n, io.ErrShortWrite
	}
	w.left -= len(p)
	return len(p), nil
}

// readUpload parses a recorded multipart upload.
func readUpload(t *testing.T, rec mocktest.Recorded) (field, filename string, data []byte) {
	t.Helper()
	mt, params, err := mime.ParseMediaType(rec.Header.Get("Content-Type"))
	require.NoError(t, err)
	require.Equal(t, "multipart/form-data", mt)
	mr := multipart.NewReader(bytes.NewReader(rec.Body), params["boundary"])
	part, err := mr.NextPart()
	require.NoError(t, err)
	data, err = io.ReadAll(part)
	require.NoError(t, err)
	_, err = mr.NextPart()
	require.ErrorIs(t, err, io.EOF, "exactly one part")
	return part.FormName(), part.FileName(), data
}

func TestUploadArtifacts(t *testing.T) {
	c, m := newMockClient(t)
	m.ReplyFile(http.StatusCreated, "artifacts-upload.json")
	b, err := c.UploadArtifacts(context.Background(), 1187, testBuildToken, "artifacts.zip", strings.NewReader("PK\x03\x04 data"), &UploadArtifactsOptions{ExpireIn: "7 days"})
	require.NoError(t, err)
	rec := m.assertCall(http.MethodPost, "builds/1187/artifacts", url.Values{"expire_in": {"7 days"}})
	assert.Equal(t, testBuildToken, rec.Header.Get("BUILD-TOKEN"))
	field, name, data := readUpload(t, rec)
	assert.Equal(t, "file", field)
	assert.Equal(t, "artifacts.zip", name)
	assert.Equal(t, "PK\x03\x04 data", string(data))

	// The answer is the runner's build record, with its token redacted in print.
	assert.Equal(t, 1187, b.ID)
	assert.Equal(t, collab.Secret(testBuildToken), b.Token)
	assert.Equal(t, &collab.ArtifactsFile{Filename: "artifacts.zip", Size: 11}, b.ArtifactsFile)
	assert.Equal(t, "bundle install --deployment\nbundle exec rspec spec/unit", b.Commands)
	require.NotNil(t, b.ArtifactsExpireAt)
	for _, out := range []string{fmt.Sprint(b), fmt.Sprintf("%v %+v %#v %s", b, b, b, b.Token)} {
		assert.NotContains(t, out, testBuildToken)
	}

	// Defaults: no expire_in, the conventional file name.
	_, err = c.UploadArtifacts(context.Background(), 9, testBuildToken, "", strings.NewReader("x"), nil)
	require.NoError(t, err)
	rec = m.assertCall(http.MethodPost, "builds/9/artifacts", nil)
	_, name, _ = readUpload(t, rec)
	assert.Equal(t, "artifacts.zip", name)
}

func TestUploadArtifactsNoRecord(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(http.StatusCreated, `null`)
	b, err := c.UploadArtifacts(context.Background(), 9, testBuildToken, "a.zip", strings.NewReader("x"), nil)
	assert.Nil(t, b)
	var de *collab.DecodeError
	require.ErrorAs(t, err, &de)
	assert.ErrorContains(t, err, "null instead of a build")
	m.Reply(http.StatusNoContent, ``)
	b, err = c.UploadArtifacts(context.Background(), 9, testBuildToken, "a.zip", strings.NewReader("x"), nil)
	assert.Nil(t, b)
	assert.ErrorContains(t, err, "204 No Content instead of a build")
}

func TestUploadArtifactsErrors(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(http.StatusRequestEntityTooLarge, `{"message":"413 Request Entity Too Large"}`)
	_, err := c.UploadArtifacts(context.Background(), 9, testBuildToken, "a.zip", strings.NewReader("big"), nil)
	assert.ErrorIs(t, err, collab.ErrRequestTooLarge)
	assert.Equal(t, 1, m.Count(), "a 413 is not retried")

	m.Reply(http.StatusForbidden, `{"message":"403 Forbidden"}`)
	_, err = c.UploadArtifacts(context.Background(), 9, testBuildToken, "a.zip", strings.NewReader("x"), nil)
	assert.ErrorIs(t, err, collab.ErrForbidden)
	m.Reply(http.StatusBadRequest, `{"message":"400 (Bad request) \"file\" not given"}`)
	_, err = c.UploadArtifacts(context.Background(), 9, testBuildToken, "a.zip", strings.NewReader("x"), nil)
	assert.ErrorIs(t, err, collab.ErrBadRequest)

	n := m.Count()
	_, err = c.UploadArtifacts(context.Background(), 9, testBuildToken, "a.zip", nil, nil)
	assert.Error(t, err)
	_, err = c.UploadArtifacts(context.Background(), 9, "", "a.zip", strings.NewReader("x"), nil)
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)
	assert.ErrorContains(t, err, "buildToken: is empty")
	assert.Equal(t, n, m.Count())
}

// onlyReader hides every method but Read.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestUploadArtifactsRetries(t *testing.T) {
	retry := collab.WithRetry(collab.RetryPolicy{MaxRetries: 3})
	t.Run("seeker is resent from where it was", func(t *testing.T) {
		c, m := newMockClient(t, retry)
		m.Reply(http.StatusTooManyRequests, `{"message":"slow down"}`, "Retry-After", "0").Fail(syscall.ECONNREFUSED).ReplyFile(http.StatusCreated, "artifacts-upload.json")
		r := strings.NewReader("skip:payload")
		_, err := r.Seek(5, io.SeekStart)
		require.NoError(t, err)
		b, err := c.UploadArtifacts(context.Background(), 1187, testBuildToken, "a.zip", r, nil)
		require.NoError(t, err)
		assert.Equal(t, 1187, b.ID)
		assert.Equal(t, 3, m.Count())
		for _, rec := range m.Calls()[1:] { // the refused attempt never reached the mock's reader
			_, _, data := readUpload(t, rec)
			assert.Equal(t, "payload", string(data), "every attempt sends the whole file")
		}
	})
	t.Run("a 5xx is not resent", func(t *testing.T) {
		c, m := newMockClient(t, retry)
		m.Reply(http.StatusBadGateway, `bad gateway`).ReplyFile(http.StatusCreated, "artifacts-upload.json")
		_, err := c.UploadArtifacts(context.Background(), 9, testBuildToken, "a.zip", strings.NewReader("x"), nil)
		assert.ErrorIs(t, err, collab.ErrServer)
		assert.Equal(t, 1, m.Count(), "the server may have stored it: a POST is not resent after an answer")
	})
	t.Run("plain reader is sent once", func(t *testing.T) {
		c, m := newMockClient(t, retry)
		m.Reply(http.StatusTooManyRequests, `{"message":"slow down"}`, "Retry-After", "0").ReplyFile(http.StatusCreated, "artifacts-upload.json")
		_, err := c.UploadArtifacts(context.Background(), 9, testBuildToken, "a.zip", onlyReader{strings.NewReader("x")}, nil)
		assert.ErrorIs(t, err, collab.ErrTooManyRequests)
		assert.Equal(t, 1, m.Count())
	})
}

// badSeeker fails to rewind.
type badSeeker struct {
	*strings.Reader
	calls int
}

func (b *badSeeker) Seek(off int64, whence int) (int64, error) {
	b.calls++
	if b.calls > 1 {
		return 0, errors.New("tape drive jammed")
	}
	return b.Reader.Seek(off, whence)
}

func TestUploadArtifactsRewindFails(t *testing.T) {
	c, m := newMockClient(t, collab.WithRetry(collab.RetryPolicy{MaxRetries: 3}))
	m.Reply(http.StatusTooManyRequests, `{"message":"slow down"}`, "Retry-After", "0")
	_, err := c.UploadArtifacts(context.Background(), 9, testBuildToken, "a.zip", &badSeeker{Reader: strings.NewReader("x")}, nil)
	assert.ErrorContains(t, err, "tape drive jammed")
	assert.Equal(t, 1, m.Count())
}

// A runner client made from an API client spends the same budget: here the
// one concurrency slot, held by the API client's open download.
func TestFromClientSharesLimits(t *testing.T) {
	_, err := FromClient(nil)
	assert.ErrorIs(t, err, collab.ErrInvalidArgument)

	m := mocktest.New(t)
	api, err := collab.NewClient("https://collab.example.com", collab.WithHTTPClient(m.Client()), collab.WithConcurrencyLimit(1), collab.WithoutRetries())
	require.NoError(t, err)
	rc, err := FromClient(api)
	require.NoError(t, err)
	assert.Equal(t, "https://collab.example.com/ci/api/v1/", rc.API().BaseURL().String())

	m.Reply(http.StatusOK, `data`)
	req, err := api.NewRequest(context.Background(), http.MethodGet, "projects/1/builds/2/artifacts", nil)
	require.NoError(t, err)
	resp, err := api.BareDo(req)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = rc.RequestBuild(ctx, testRunnerToken, nil)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "the runner call waits for the API client's slot")
	assert.Equal(t, 1, m.Count())

	require.NoError(t, resp.Body.Close())
	m.Reply(http.StatusNoContent, ``)
	_, err = rc.RequestBuild(context.Background(), testRunnerToken, nil)
	require.NoError(t, err)
	assert.Equal(t, "/ci/api/v1/builds/register", m.Last().Path)
}
