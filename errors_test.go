package collab

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/collabsvc/collab/internal/mocktest"
	"github.com/collabsvc/collab/internal/suite"
	"github.com/collabsvc/collab/internal/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorBodyShapes(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		message string
		fields  map[string][]string
	}{
		{"message string", `{"message": "404 Project Not Found"}`, "404 Project Not Found", nil},
		{"nested validation", `{"message": {"title": ["is invalid"], "namespace": {"name": ["too long", "is taken"]}}}`,
			"namespace.name too long, is taken; title is invalid",
			map[string][]string{"title": {"is invalid"}, "namespace.name": {"too long", "is taken"}}},
		{"error string", `{"error": "416 Range Not Satisfiable"}`, "416 Range Not Satisfiable", nil},
		{"bare array", `["Project name has already been taken", "Path is invalid"]`, "Project name has already been taken; Path is invalid", nil},
		{"html page", "<html><head><title>502 Bad Gateway</title></head><body><h1>502   Bad\nGateway</h1></body></html>", "502 Bad Gateway 502 Bad Gateway", nil},
		{"plain text", "upstream timed out\n", "upstream timed out", nil},
		{"empty", "", "", nil},
		{"whitespace", " \n ", "", nil},
		{"json string", `"just a string"`, "just a string", nil},
		{"number", `42`, "42", nil},
		{"object without message", `{"foo": "bar"}`, `{"foo": "bar"}`, nil},
		{"message with numbers", `{"message": {"size": [1, true]}}`, "size 1, true", map[string][]string{"size": {"1", "true"}}},
		{"error number and message", `{"error": 17, "message": "already exists"}`, "already exists", nil},
		{"multi-line message", `{"message": "line one\nline two"}`, "line one line two", nil},
		{"invalid utf-8", "caf\xe9 broken", "caf broken", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, fields := parseErrorBody([]byte(tt.body))
			assert.Equal(t, tt.message, msg)
			assert.Equal(t, tt.fields, fields)
		})
	}
}

func TestErrorExcerptIsShort(t *testing.T) {
	msg, _ := parseErrorBody([]byte(strings.Repeat("é", 1000)))
	assert.LessOrEqual(t, len(msg), maxExcerpt+len("…"))
	assert.True(t, strings.HasSuffix(msg, "…"))
	assert.NotContains(t, msg, "\ufffd", "cut on a rune boundary")
}

func TestErrorBodyReadLimit(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(http.StatusInternalServerError, strings.Repeat("x", 3*maxErrorBody))
	_, err := send(context.Background(), c, http.MethodGet, route("projects"), nil, nil)
	var er *ErrorResponse
	require.ErrorAs(t, err, &er)
	assert.Len(t, er.Body, maxErrorBody)
	assert.LessOrEqual(t, len(er.Message), maxExcerpt+len("…"))
}

func TestSentinels(t *testing.T) {
	all := []error{ErrNotModified, ErrBadRequest, ErrUnauthorized, ErrForbidden, ErrNotFound, ErrMethodNotAllowed,
		ErrNotAcceptable, ErrConflict, ErrRequestTooLarge, ErrRangeNotSatisfiable, ErrUnprocessable, ErrTooManyRequests, ErrServer}
	tests := []struct {
		status int
		want   error
	}{
		{304, ErrNotModified}, {400, ErrBadRequest}, {401, ErrUnauthorized}, {403, ErrForbidden}, {404, ErrNotFound},
		{405, ErrMethodNotAllowed}, {406, ErrNotAcceptable}, {409, ErrConflict}, {413, ErrRequestTooLarge},
		{416, ErrRangeNotSatisfiable}, {422, ErrUnprocessable}, {429, ErrTooManyRequests},
		{500, ErrServer}, {502, ErrServer}, {503, ErrServer}, {504, ErrServer}, {599, ErrServer},
		{410, nil}, {302, nil},
	}
	for _, tt := range tests {
		c, m := newMockClient(t)
		m.Reply(tt.status, `{"message":"x"}`)
		_, err := send(context.Background(), c, http.MethodGet, route("projects/%s", 1), nil, nil)
		var er *ErrorResponse
		require.ErrorAs(t, err, &er, "status %d", tt.status)
		assert.Equal(t, tt.status, er.StatusCode)
		for _, s := range all {
			assert.Equal(t, s == tt.want, errors.Is(err, s), "status %d vs %v", tt.status, s)
		}
	}
}

func TestErrorMessageReadsWell(t *testing.T) {
	tests := []struct {
		method, path string
		status       int
		body         string
		want         string
	}{
		{"PUT", "projects/1/merge_requests/5/merge", 409, `{"message":"409 Conflict: SHA does not match HEAD of source branch"}`,
			"PUT /api/v3/projects/1/merge_requests/5/merge: 409 Conflict: SHA does not match HEAD of source branch"},
		{"GET", "projects/9", 404, `{"message":"404 Project Not Found"}`, "GET /api/v3/projects/9: 404 Not Found: Project Not Found"},
		{"GET", "projects/9", 401, `{"message":"401 Unauthorized"}`, "GET /api/v3/projects/9: 401 Unauthorized"},
		{"POST", "projects", 400, `{"message":{"name":["can't be blank"]}}`, "POST /api/v3/projects: 400 Bad Request: name can't be blank"},
		{"GET", "projects", 502, ``, "GET /api/v3/projects: 502 Bad Gateway"},
		{"GET", "projects/a%2Fb", 403, `{"message":"403 Forbidden: Must be admin to use sudo"}`, "GET /api/v3/projects/a%2Fb: 403 Forbidden: Must be admin to use sudo"},
	}
	for _, tt := range tests {
		c, m := newMockClient(t)
		m.Reply(tt.status, tt.body)
		_, err := send(context.Background(), c, tt.method, endpoint{s: tt.path}, nil, nil)
		require.Error(t, err)
		assert.Equal(t, tt.want, err.Error())
		assert.NotContains(t, err.Error(), "\n")
	}
}

func TestErrorsNeverCarryTokens(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(404, `{"message":"404 Not found"}`)
	req, err := c.NewRequest(context.Background(), http.MethodGet, "projects?private_token=leak1&access_token=leak2&token=leak3&keep=yes", nil)
	require.NoError(t, err)
	_, err = c.Do(req, nil)
	require.Error(t, err)
	var er *ErrorResponse
	require.ErrorAs(t, err, &er)
	for _, s := range []string{err.Error(), er.URL, testToken} {
		_ = s
	}
	for _, secret := range []string{"leak1", "leak2", "leak3", testToken} {
		assert.NotContains(t, err.Error(), secret)
		assert.NotContains(t, er.URL, secret)
	}
	assert.Contains(t, er.URL, "keep=yes")

	m.Fail(errors.New("boom"))
	_, err = c.Do(req, nil)
	var re *RequestError
	require.ErrorAs(t, err, &re)
	for _, secret := range []string{"leak1", "leak2", "leak3", testToken} {
		assert.NotContains(t, err.Error(), secret)
	}
}

func TestRedactURL(t *testing.T) {
	assert.Equal(t, "", wire.RedactURL(nil))
	u := mustParse(t, "https://user:pass@h.example/p?PRIVATE_TOKEN=a&x=1")
	got := wire.RedactURL(u)
	assert.NotContains(t, got, "pass")
	assert.NotContains(t, got, "=a")
	assert.Contains(t, got, "x=1")
	bad := mustParse(t, "https://h.example/p")
	bad.RawQuery = "private_token=%zz"
	assert.Equal(t, "https://h.example/p?[redacted]", wire.RedactURL(bad))
}

func TestDecodeErrors(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(200, `{"id": "not a number"}`)
	_, _, err := do[Issue](context.Background(), c, http.MethodGet, route("x"), nil)
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Error(), "decoding response")
	assert.NotNil(t, errors.Unwrap(de))

	m.Reply(200, `{"]`)
	is, _, err := do[Issue](context.Background(), c, http.MethodGet, route("x"), nil)
	require.ErrorAs(t, err, &de)
	var fields FieldErrors
	assert.False(t, errors.As(err, &fields), "a body that is not JSON")
	assert.Nil(t, is, "comes with no record")

	m.Reply(200, `null`)
	_, _, err = do[Issue](context.Background(), c, http.MethodGet, route("x"), nil)
	require.ErrorAs(t, err, &de)
	assert.ErrorIs(t, err, errUnexpectedNullResult)

	m.Reply(200, ``)
	_, _, err = do[Issue](context.Background(), c, http.MethodGet, route("x"), nil)
	require.ErrorAs(t, err, &de)
	assert.ErrorIs(t, err, errEmptyBody)

	m.Reply(200, `{"id": 3, "unknown_field": {"nested": true}}`)
	is, _, err = do[Issue](context.Background(), c, http.MethodGet, route("x"), nil)
	require.NoError(t, err)
	assert.Equal(t, 3, is.ID)
}

// TestPartialRecord: a record some of whose values do not fit comes back
// with every other field set and the bad values in Extra, together with a
// *DecodeError that wraps FieldErrors; a page likewise.
func TestPartialRecord(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(200, `{"id": 3, "iid": "three", "title": "t", "created_at": "yesterday"}`)
	is, _, err := c.Issues.Get(context.Background(), 1, 3)
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	var fields FieldErrors
	require.ErrorAs(t, err, &fields)
	require.Len(t, fields, 2)
	assert.Equal(t, "created_at", fields[0].Path)
	assert.Equal(t, "iid", fields[1].Path)
	assert.Equal(t, `"three"`, fields[1].Value)
	require.NotNil(t, is, "the record comes with the error")
	assert.Equal(t, &Issue{ID: 3, Title: "t", Extra: map[string]json.RawMessage{
		"iid": json.RawMessage(`"three"`), "created_at": json.RawMessage(`"yesterday"`)}}, is)

	m.Reply(200, `[{"id": 1}, {"id": 2, "iid": []}]`)
	list, _, err := c.Issues.List(context.Background(), 1, nil)
	require.ErrorAs(t, err, &fields)
	assert.Equal(t, "[1].iid", fields[0].Path)
	assert.Equal(t, []*Issue{{ID: 1}, {ID: 2, Extra: map[string]json.RawMessage{"iid": json.RawMessage(`[]`)}}}, list)

	var direct Issue
	err = json.Unmarshal([]byte(`{"id": "x"}`), &direct)
	require.ErrorAs(t, err, &fields, "json.Unmarshal into a record reports the same type")
	assert.Equal(t, "id", fields[0].Path)
}

// TestNoSecretInAnyError calls every method of every service against a
// server that repeats the whole request (headers, URL, body) in its error
// in each of the shapes servers use, with each kind of credential, and
// checks that no error text and no log line carries it, and that every
// error reads as one short line.
func TestNoSecretInAnyError(t *testing.T) {
	srv, served := suite.NewEchoServer(t)
	for _, auth := range []func(string) ClientOption{WithPrivateToken, WithOAuthToken, WithPersonalAccessToken} {
		secret := watched.Secret("sweep-secret-" + strconv.Itoa(int(served.Load())) + "-0d7c")
		c, err := NewClient(srv.URL, auth(secret), WithoutRetries(), WithLogger(testLogger))
		require.NoError(t, err)
		before := served.Load()
		calls := suite.Sweep(context.Background(), c.Sudo("someone"), suite.Args{String: "x-arg"})
		require.Greater(t, len(calls), 60, "the sweep reaches every service method")
		assert.Greater(t, served.Load()-before, int64(len(calls)*3/4), "most calls reached the server")
		suite.CheckErrors(t, watched, calls, secret)
	}
	require.NoError(t, watched.Check())
	leaky := suite.NewRecorder(nil, testToken)
	leaky.Record("x " + testToken)
	assert.Error(t, leaky.Check(), "the check catches a token")
}

// TestShortTokensRedactInOnePass: a token of one to three characters is
// replaced where it stands as a word, never inside one (or inside the
// marker), and the marker stays whole.
func TestShortTokensRedactInOnePass(t *testing.T) {
	for token, want := range map[string]string{
		"c":   "GET /api/v3/projects/1: 404 Not Found: Project Not Found",
		"ct":  "GET /api/v3/projects/1: 404 Not Found: Project Not Found",
		"Not": "GET /api/v3/projects/1: 404 Not Found: Project [redacted] Found",
		"re":  "GET /api/v3/projects/1: 404 Not Found: Project Not Found",
	} {
		m := mocktest.New(t)
		c, err := NewClient("https://collab.example.com", WithPrivateToken(token), WithHTTPClient(m.Client()), WithoutRetries())
		require.NoError(t, err)
		m.Reply(404, `{"message":"404 Project Not Found"}`)
		_, _, err = c.Projects.Get(context.Background(), 1)
		require.Error(t, err)
		assert.Equal(t, want, err.Error(), "token %q", token)
	}
}

// TestPartialPageInIterator: an iterator hands out the records of a page
// some of whose values did not fit, then its error, which wraps
// FieldErrors and ends the walk; with and without prefetch.
func TestPartialPageInIterator(t *testing.T) {
	pages := map[string]string{"1": `[{"id":1},{"id":2}]`, "2": `[{"id":3},{"id":"x"}]`, "3": `[{"id":5}]`}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pg := r.URL.Query().Get("page")
		w.Header().Set("X-Total-Pages", "3")
		w.Header().Set("X-Page", pg)
		if pg != "3" {
			n, _ := strconv.Atoi(pg)
			w.Header().Set("X-Next-Page", strconv.Itoa(n+1))
		}
		_, _ = io.WriteString(w, pages[pg])
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, WithoutRetries())
	require.NoError(t, err)
	for _, iopts := range [][]IterOption{nil, {Prefetch(2)}} {
		var ids []int
		var errs []error
		for is, err := range all[Issue](context.Background(), c, route("issues"), nil, iopts) {
			if err != nil {
				errs = append(errs, err)
				continue
			}
			ids = append(ids, is.ID)
		}
		assert.Equal(t, []int{1, 2, 3, 0}, ids, "the partial page's records, the bad one with its other fields")
		require.Len(t, errs, 1)
		var fields FieldErrors
		require.ErrorAs(t, errs[0], &fields)
		assert.Equal(t, "[1].id", fields[0].Path)
	}
}
