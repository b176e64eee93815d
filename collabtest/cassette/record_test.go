package cassette_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/collabtest/cassette"
)

const secret = "canary-2c9f4e7a1b"

// upstream serves h and returns its URL.
func upstream(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// send makes a request through hc and returns the answer's status and body.
func send(t *testing.T, hc *http.Client, method, rawURL, contentType, body string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, strings.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func written(t *testing.T, c *cassette.Cassette) string {
	t.Helper()
	var b bytes.Buffer
	_, err := c.WriteTo(&b)
	require.NoError(t, err)
	return b.String()
}

func TestRecorderHidesEverySecret(t *testing.T) {
	base := upstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "session="+secret)
		w.Header().Set("X-Gitlab-Token", secret)
		_, _ = io.WriteString(w, `{"private_token":"`+secret+`","runners":[{"token":"`+secret+`","id":3}],"name":"x"}`)
	})
	rec := cassette.NewRecorder()
	hc := &http.Client{Transport: rec.Transport(nil)}
	send(t, hc, "GET", base+"/api/v3/user?private_token="+secret+"&page=2", "", "", "Sudo", secret, "Cookie", secret)
	send(t, hc, "POST", base+"/ci/api/v1/builds/register", "application/x-www-form-urlencoded", "token="+secret+"&x=1",
		"Authorization", "Bearer "+secret, "Build-Token", secret)
	send(t, hc, "PUT", base+"/api/v3/projects/1/hooks/2", "application/json",
		`{"token":"`+secret+`","nested":{"access_token":"`+secret+`","password":"`+secret+`"}}`,
		"PRIVATE-TOKEN", secret, "X-Gitlab-Token", secret)
	text := written(t, rec.Cassette())
	assert.NotContains(t, text, secret)
	assert.NotContains(t, text, "Set-Cookie", "only the headers that matter are kept")
	assert.Contains(t, text, `"Bearer <secret-1>"`, "the scheme stays, the same secret gets the same placeholder")
	assert.NotContains(t, text, "<secret-2>")
	assert.Contains(t, text, `"route": "GET /api/v3/user"`)
	assert.Contains(t, text, `"route": "PUT /api/v3/projects/:id/hooks/:hook_id"`)
	assert.Contains(t, text, `"text": "token=%3Csecret-1%3E&x=1"`)
}

func TestRecorderHidesATokenEchoedInLinks(t *testing.T) {
	base := upstream(t, func(w http.ResponseWriter, r *http.Request) {
		q := url.Values{"page": {"2"}, "private_token": {r.URL.Query().Get("private_token")}}
		w.Header().Set("Link", `<http://`+r.Host+`/api/v3/projects?`+q.Encode()+`>; rel="next"`)
		w.Header().Set("Location", `http://`+r.Host+`/api/v3/projects?`+q.Encode())
	})
	rec := cassette.NewRecorder()
	hc := &http.Client{Transport: rec.Transport(nil)}
	send(t, hc, "GET", base+"/api/v3/projects?private_token="+url.QueryEscape(secret+"+/"), "", "")
	text := written(t, rec.Cassette())
	assert.NotContains(t, text, secret)
	assert.Contains(t, text, "private_token=%3Csecret-1%3E", "the query's placeholder, escaped as the URL was")
}

// TestRecorderHidesATokenEchoedInABody: an answer that quotes the
// request's token under a key that is not a secret's keeps the placeholder.
func TestRecorderHidesATokenEchoedInABody(t *testing.T) {
	base := upstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"message":"401 Unauthorized: token `+r.Header.Get("PRIVATE-TOKEN")+` is revoked"}`)
	})
	rec := cassette.NewRecorder()
	hc := &http.Client{Transport: rec.Transport(nil)}
	send(t, hc, "GET", base+"/api/v3/projects", "", "", "PRIVATE-TOKEN", secret)
	text := written(t, rec.Cassette())
	assert.NotContains(t, text, secret)
	assert.Contains(t, text, "token <secret-1> is revoked")
}

func TestReplayAnswersInRecordedOrder(t *testing.T) {
	n := 0
	base := upstream(t, func(w http.ResponseWriter, r *http.Request) {
		n++
		w.Header().Set("Link", `<http://`+r.Host+`/api/v3/projects?page=2>; rel="next"`)
		_, _ = io.WriteString(w, strings.Repeat("x", n))
	})
	rec := cassette.NewRecorder()
	hc := &http.Client{Transport: rec.Transport(nil)}
	for range 2 {
		send(t, hc, "GET", base+"/api/v3/projects", "", "")
	}
	c := rec.Cassette()
	assert.Equal(t, `<http://recorded.invalid/api/v3/projects?page=2>; rel="next"`, c.Exchanges[0].Response.Header.Get("Link"))
	p := cassette.NewReplayer(c)
	replay := &http.Client{Transport: p}
	_, first := send(t, replay, "GET", "http://replay.invalid/api/v3/projects", "", "")
	assert.Error(t, p.Verify(), "one exchange is left")
	_, second := send(t, replay, "GET", "http://replay.invalid/api/v3/projects", "", "")
	_, third := send(t, replay, "GET", "http://replay.invalid/api/v3/projects", "", "")
	assert.Equal(t, []string{"x", "xx", "xx"}, []string{first, second, third}, "in order, then the last again")
	assert.NoError(t, p.Verify())
	resp, err := replay.Get("http://replay.invalid/api/v3/projects")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, `<http://replay.invalid/api/v3/projects?page=2>; rel="next"`, resp.Header.Get("Link"), "the replay's own origin")
}

func TestReplayNamesWhatDiffers(t *testing.T) {
	base := upstream(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusCreated) })
	rec := cassette.NewRecorder()
	hc := &http.Client{Transport: rec.Transport(nil)}
	send(t, hc, "POST", base+"/api/v3/projects/1/issues?private_token="+secret, "application/json",
		`{"title":"a","labels":["x","y"],"token":"`+secret+`"}`)
	send(t, hc, "GET", base+"/api/v3/projects/1/issues?state=opened", "", "")
	p := cassette.NewReplayer(rec.Cassette())
	replay := &http.Client{Transport: p}

	// Another token, sent as a form: still the recorded request.
	status, _ := send(t, replay, "POST", "http://r.invalid/api/v3/projects/1/issues?private_token=other",
		"application/x-www-form-urlencoded", "title=a&labels=x&labels=y&token=other")
	assert.Equal(t, http.StatusCreated, status)

	for _, tc := range []struct{ method, url, body, want string }{
		{"POST", "/api/v3/projects/1/issues", `{"title":"a","labels":["x","z"]}`,
			`closest is #0 POST /api/v3/projects/:id/issues, which differs in body /labels/1 (recorded "y", got "z")`},
		{"POST", "/api/v3/projects/1/issues", `{"title":"a","labels":["x","y"],"due":1}`, `body /due (recorded (missing), got 1)`},
		{"GET", "/api/v3/projects/1/issues?state=closed", "", `query key "state" (recorded "opened", got "closed")`},
		{"GET", "/api/v3/projects/2/issues?state=opened", "", `path (recorded "/api/v3/projects/1/issues", got "/api/v3/projects/2/issues")`},
		{"DELETE", "/api/v3/projects/1", "", "none recorded with that method"},
	} {
		req, err := http.NewRequest(tc.method, "http://r.invalid"+tc.url, strings.NewReader(tc.body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		_, err = replay.Do(req)
		var mismatch *cassette.MismatchError
		require.True(t, errors.As(err, &mismatch), "%s %s: %v", tc.method, tc.url, err)
		assert.Contains(t, err.Error(), tc.want)
	}

	// The same answers from the handler: 501 with the error as the message.
	srv := httptest.NewServer(p)
	defer srv.Close()
	status, body := send(t, srv.Client(), "GET", srv.URL+"/api/v3/projects/1/issues?state=closed", "", "")
	assert.Equal(t, http.StatusNotImplemented, status)
	var msg struct{ Message string }
	require.NoError(t, json.Unmarshal([]byte(body), &msg))
	assert.Contains(t, msg.Message, `query key "state"`)
	status, _ = send(t, srv.Client(), "GET", srv.URL+"/api/v3/projects/1/issues?state=opened", "", "")
	assert.Equal(t, http.StatusCreated, status)
	assert.NoError(t, p.Verify())
}

func TestReplayRefusesAnInvalidStatus(t *testing.T) {
	p := cassette.NewReplayer(&cassette.Cassette{Exchanges: []cassette.Exchange{{Method: "GET", Path: "/x"}}})
	srv := httptest.NewServer(p)
	defer srv.Close()
	status, body := send(t, srv.Client(), "GET", srv.URL+"/x", "", "")
	assert.Equal(t, http.StatusNotImplemented, status)
	assert.Contains(t, body, "exchange #0 has no valid status (0)")
	_, err := (&http.Client{Transport: cassette.NewReplayer(nil)}).Get("http://r.invalid/x")
	assert.ErrorContains(t, err, "none recorded with that method")
}

// A placeholder that comes back, as a replayed answer's token sent again,
// keeps its number, and a new secret does not take it.
func TestPlaceholdersComingBack(t *testing.T) {
	base := upstream(t, func(w http.ResponseWriter, r *http.Request) {})
	rec := cassette.NewRecorder()
	hc := &http.Client{Transport: rec.Transport(nil)}
	send(t, hc, "GET", base+"/a", "", "", "PRIVATE-TOKEN", "<secret-2>")
	send(t, hc, "GET", base+"/b", "", "", "PRIVATE-TOKEN", secret)
	c := rec.Cassette()
	assert.Equal(t, "<secret-2>", c.Exchanges[0].Request.Header.Get("Private-Token"))
	assert.Equal(t, "<secret-3>", c.Exchanges[1].Request.Header.Get("Private-Token"))
}

func TestVerifyListsUnused(t *testing.T) {
	c := &cassette.Cassette{Exchanges: []cassette.Exchange{
		{Route: "GET /api/v3/user", Method: "GET", Path: "/api/v3/user", Status: 200},
		{Kind: cassette.DeliveryKind, Route: "DELIVERY Push Hook", Method: "POST", Path: "/hook", Status: 200},
		{Route: "GET /api/v3/projects", Method: "GET", Path: "/api/v3/projects", Query: url.Values{"page": {"2"}}, Status: 200},
	}}
	p := cassette.NewReplayer(c)
	err := p.Verify()
	require.Error(t, err)
	assert.Equal(t, "cassette: replay: 2 recorded exchanges were not used: #0 GET /api/v3/user; #2 GET /api/v3/projects?page=2", err.Error())
	_, err = (&http.Client{Transport: p}).Post("http://r.invalid/hook", "application/json", strings.NewReader("{}"))
	assert.ErrorContains(t, err, "none recorded with that method", "deliveries are not served")
}

func TestMultipartAndBinaryBodies(t *testing.T) {
	base := upstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write([]byte{0xff, 0x00, 0x01})
	})
	upload := func(hc *http.Client, content string) (int, string) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, err := mw.CreateFormFile("file", "a.txt")
		require.NoError(t, err)
		_, _ = io.WriteString(fw, content)
		require.NoError(t, mw.Close())
		return send(t, hc, "POST", base+"/api/v3/projects/1/uploads", mw.FormDataContentType(), body.String())
	}
	rec := cassette.NewRecorder()
	upload(&http.Client{Transport: rec.Transport(nil)}, "hello")
	c := rec.Cassette()
	assert.Equal(t, "multipart/form-data; boundary=collab-cassette-boundary", c.Exchanges[0].Request.Header.Get("Content-Type"))
	assert.Equal(t, []byte{0xff, 0x00, 0x01}, c.Exchanges[0].Response.Base64)
	var b bytes.Buffer
	_, err := c.WriteTo(&b)
	require.NoError(t, err)
	again, err := cassette.Read(&b)
	require.NoError(t, err)
	replay := &http.Client{Transport: cassette.NewReplayer(again)}
	_, body := upload(replay, "hello")
	assert.Equal(t, "\xff\x00\x01", body, "another boundary, the same form")
	_, err = replay.Post(base+"/api/v3/projects/1/uploads", "text/plain", strings.NewReader("hello"))
	assert.ErrorContains(t, err, "body /")
}

func TestReadCassetteRefusesBadInput(t *testing.T) {
	for in, want := range map[string]string{
		`not json`: "reading a cassette",
		`{"format":"other","version":1,"exchanges":[]}`:                                                               `format "other"`,
		`{"format":"collab-cassette","version":2,"exchanges":[]}`:                                                     "version 2",
		`{"format":"collab-cassette","version":1,"exchanges":[{"method":"GET","path":"x"}]}`:                          "exchange 0",
		`{"format":"collab-cassette","version":1,"exchanges":[],"extra":true}`:                                        `unknown field "extra"`,
		`{"format":"collab-cassette","version":1,"exchanges":[{"method":"GET","path":"/x"}]}`:                         "status",
		`{"format":"collab-cassette","version":1,"exchanges":[{"kind":"x","method":"GET","path":"/x","status":200}]}`: `unknown kind "x"`,
	} {
		_, err := cassette.Read(strings.NewReader(in))
		assert.ErrorContains(t, err, want, in)
	}
	_, err := cassette.Load("testdata/no-such-cassette.json")
	assert.Error(t, err)
	assert.Error(t, (&cassette.Cassette{}).WriteFile(t.TempDir()+"/no/dir/c.json"))
}

func TestRecorderHandler(t *testing.T) {
	_, err := cassette.NewRecorder().Handler("ftp://x")
	assert.ErrorContains(t, err, "want an http:// or https:// URL")
	base := upstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			defer zw.Close()
			_, _ = io.WriteString(zw, `{"web_url":"http://`+r.Host+`/root"}`)
			return
		}
		_, _ = io.WriteString(w, `{"web_url":"http://`+r.Host+`/root"}`)
	})
	rec := cassette.NewRecorder()
	h, err := rec.Handler(base)
	require.NoError(t, err)
	proxy := httptest.NewServer(h)
	defer proxy.Close()
	status, _ := send(t, proxy.Client(), "GET", proxy.URL+"/api/v3/projects/7", "", "", "PRIVATE-TOKEN", secret,
		"Accept-Encoding", "gzip")
	assert.Equal(t, http.StatusOK, status)
	c := rec.Cassette()
	require.Len(t, c.Exchanges, 1)
	e := c.Exchanges[0]
	assert.Equal(t, "GET /api/v3/projects/:id", e.Route)
	assert.JSONEq(t, `{"web_url":"http://recorded.invalid/root"}`, string(e.Response.JSON))
	assert.Equal(t, []string{"<secret-1>"}, e.Request.Header["Private-Token"])
}

func TestConformRules(t *testing.T) {
	answer := `{"id":7,"created_at":"2026-01-02T03:04:05Z","commit":"0123456789abcdef0123","web_url":"http://recorded.invalid/x","token":"<secret-1>","title":"a",` +
		`"repo_url":"http://gitlab-ci-token:<secret-1>@recorded.invalid/x.git"}`
	c := &cassette.Cassette{Exchanges: []cassette.Exchange{{
		Route: "GET /api/v3/user", Method: "GET", Path: "/api/v3/user", Status: 200,
		Request:  cassette.Message{Header: http.Header{"Private-Token": {"<secret-2>"}}},
		Response: cassette.Message{Header: http.Header{"Content-Type": {"application/json"}, "X-Total": {"1"}}, JSON: json.RawMessage(answer)},
	}}}
	var gotToken string
	body := `{"id":9,"created_at":"2027-05-06T07:08:09.5Z","commit":"fedcba9876543210fedc","web_url":"http://HOST/x","token":"t","title":"a",` +
		`"repo_url":"http://gitlab-ci-token:t@HOST/x.git"}`
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotToken = r.Header.Get("PRIVATE-TOKEN") + r.URL.Query().Get("private_token")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Total", "1")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, strings.ReplaceAll(body, "HOST", r.Host))
	}))
	defer srv.Close()
	ctx := context.Background()
	diffs, err := cassette.Conform(ctx, c, srv.URL, cassette.ConformOptions{Token: "mine"})
	require.NoError(t, err)
	assert.Empty(t, diffs, "ids, times, hex runs, secrets (alone and inside a URL) and the origin match by rule")
	assert.Equal(t, "mine", gotToken)

	byQuery := *c
	byQuery.Exchanges = []cassette.Exchange{c.Exchanges[0]}
	byQuery.Exchanges[0].Request.Header = nil
	byQuery.Exchanges[0].Query = url.Values{"private_token": {"<secret-2>"}}
	diffs, err = cassette.Conform(ctx, &byQuery, srv.URL, cassette.ConformOptions{Token: "mine"})
	require.NoError(t, err)
	assert.Empty(t, diffs)
	assert.Equal(t, "mine", gotToken, "the token sent as a parameter")

	status, body = http.StatusAccepted, `{"id":"9","created_at":null,"title":"b","extra":1}`
	diffs, err = cassette.Conform(ctx, c, srv.URL, cassette.ConformOptions{})
	require.NoError(t, err)
	var parts []string
	for _, d := range diffs {
		parts = append(parts, d.String())
	}
	assert.Equal(t, []string{
		"#0 GET /api/v3/user: status: recorded 200, got 202",
		`#0 GET /api/v3/user: body /commit: recorded "0123456789abcdef0123", got (missing)`,
		`#0 GET /api/v3/user: body /created_at: recorded "2026-01-02T03:04:05Z", got null`,
		"#0 GET /api/v3/user: body /extra: recorded (missing), got 1",
		`#0 GET /api/v3/user: body /id: recorded 7, got "9"`,
		`#0 GET /api/v3/user: body /repo_url: recorded "http://gitlab-ci-token:<secret-1>@recorded.invalid/x.git", got (missing)`,
		`#0 GET /api/v3/user: body /title: recorded "a", got "b"`,
		`#0 GET /api/v3/user: body /token: recorded "<secret-1>", got (missing)`,
		`#0 GET /api/v3/user: body /web_url: recorded "http://recorded.invalid/x", got (missing)`,
	}, parts)

	_, err = cassette.Conform(ctx, c, "not a url", cassette.ConformOptions{})
	assert.ErrorContains(t, err, "not an absolute URL")
	srv.Close()
	_, err = cassette.Conform(ctx, c, srv.URL, cassette.ConformOptions{})
	assert.ErrorContains(t, err, "#0 GET /api/v3/user")
}

// A redirect is recorded hop by hop, and Conform compares it hop by hop.
func TestConformQueryTokenEchoedInLinks(t *testing.T) {
	fake := collabtest.NewTestServer(t)
	rec := cassette.NewRecorder()
	send(t, &http.Client{Transport: rec.Transport(nil)}, "GET", fake.URL+"/api/v3/projects?per_page=1&private_token="+fake.AdminToken, "", "")
	c := rec.Cassette()
	assert.NotContains(t, written(t, c), fake.AdminToken)
	assert.Contains(t, c.Exchanges[0].Response.Header.Get("Link"), "private_token=%3Csecret-1%3E")
	diffs, err := cassette.Conform(context.Background(), c, fake.URL, cassette.ConformOptions{Token: fake.AdminToken})
	require.NoError(t, err)
	assert.Empty(t, diffs, "the token the target echoes stands for its placeholder")
}

func TestConformRedirectHops(t *testing.T) {
	base := upstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v3/old" {
			http.Redirect(w, r, "/api/v3/new", http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "new")
	})
	rec := cassette.NewRecorder()
	status, body := send(t, &http.Client{Transport: rec.Transport(nil)}, "GET", base+"/api/v3/old", "", "")
	require.Equal(t, []any{http.StatusOK, "new"}, []any{status, body})
	c := rec.Cassette()
	require.Len(t, c.Exchanges, 2)
	assert.Equal(t, "/api/v3/new", c.Exchanges[0].Response.Header.Get("Location"))
	diffs, err := cassette.Conform(context.Background(), c, base, cassette.ConformOptions{})
	require.NoError(t, err)
	assert.Empty(t, diffs)
}
