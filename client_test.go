package collab

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/collabsvc/collab/internal/wire"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewClientBaseURL(t *testing.T) {
	for _, in := range []string{
		"https://collab.example.com", "https://collab.example.com/", "https://collab.example.com/api/v3",
		"https://collab.example.com/api/v3/", " https://collab.example.com ",
	} {
		c, err := NewClient(in)
		require.NoError(t, err, in)
		assert.Equal(t, "https://collab.example.com/api/v3/", c.BaseURL().String(), in)
	}
	c, err := NewClient("https://h.example/prefix/api/v3")
	require.NoError(t, err)
	assert.Equal(t, "https://h.example/prefix/api/v3/", c.BaseURL().String())
	for _, bad := range []string{"", "collab.example.com", "ftp://x", "https://", "://x", "https://u:p@h.example", "https://h.example/?private_token=x", "http://h.example/%zz"} {
		_, err := NewClient(bad)
		assert.Error(t, err, bad)
	}
}

func TestAuthHeaders(t *testing.T) {
	tests := []struct {
		opt       ClientOption
		key, want string
	}{
		{WithPrivateToken("p-tok"), "PRIVATE-TOKEN", "p-tok"},
		{WithPersonalAccessToken("pat-tok"), "PRIVATE-TOKEN", "pat-tok"},
		{WithOAuthToken("o-tok"), "Authorization", "Bearer o-tok"},
	}
	for _, tt := range tests {
		c, m := newMockClient(t, tt.opt)
		m.Reply(200, `{}`)
		_, err := send(context.Background(), c, http.MethodGet, route("projects"), nil, nil)
		require.NoError(t, err)
		rec := m.Last()
		assert.Equal(t, tt.want, rec.Header.Get(tt.key))
		if tt.key == "Authorization" {
			assert.Empty(t, rec.Header.Get("PRIVATE-TOKEN"))
		} else {
			assert.Empty(t, rec.Header.Get("Authorization"))
		}
		assert.Empty(t, rec.Query, "tokens travel in headers only")
		assert.Equal(t, "collab-go/"+Version, rec.Header.Get("User-Agent"))
		assert.Equal(t, "application/json", rec.Header.Get("Accept"))
		assert.Empty(t, rec.Header.Get("SUDO"))
	}
	_, err := NewClient("https://h.example", WithPrivateToken("a\r\nX-Evil: 1"))
	assert.Error(t, err)
}

func TestSudoIsACheapIndependentCopy(t *testing.T) {
	c, m := newMockClient(t, WithUserAgent("bot/1"))
	m.Reply(200, `{}`)
	alice := c.Sudo("alice")
	require.NotSame(t, c, alice)
	assert.Same(t, alice, alice.Issues.client, "services point at the copy")
	_, err := send(context.Background(), alice, http.MethodGet, route("projects"), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "alice", m.Last().Header.Get("SUDO"))
	assert.Equal(t, testToken, m.Last().Header.Get("PRIVATE-TOKEN"))
	assert.Equal(t, "bot/1", m.Last().Header.Get("User-Agent"))
	_, err = send(context.Background(), c, http.MethodGet, route("projects"), nil, nil)
	require.NoError(t, err)
	assert.Empty(t, m.Last().Header.Get("SUDO"), "the original is unchanged")
	assert.Equal(t, "42", c.Sudo("42").Sudo("42").sudo)
}

type encodeOptions struct {
	Title    *string  `url:"title,omitempty"`
	Labels   []string `url:"labels,comma,omitempty"`
	Archived *bool    `url:"archived,omitempty"`
	Count    int      `url:"count,omitempty"`
	Skip     *string  `url:"skip,omitempty"`
}

func TestRequestEncoding(t *testing.T) {
	opt := &encodeOptions{Title: Ptr("Crash on save & quit"), Labels: []string{"bug", "p1"}, Archived: Ptr(false), Count: 3}
	want := url.Values{"title": {"Crash on save & quit"}, "labels": {"bug,p1"}, "archived": {"false"}, "count": {"3"}}
	for _, method := range []string{http.MethodGet, http.MethodDelete, http.MethodPost, http.MethodPut} {
		c, m := newMockClient(t)
		m.Reply(200, `{}`)
		_, err := send(context.Background(), c, method, route("projects/%s/issues", "g/p"), opt, nil)
		require.NoError(t, err)
		rec := m.AssertRequest(method, "projects/g%2Fp/issues", want)
		if method == http.MethodPost || method == http.MethodPut {
			assert.Equal(t, "application/x-www-form-urlencoded", rec.Header.Get("Content-Type"))
		} else {
			assert.Empty(t, rec.Body)
		}
	}
	// An io.Reader is the raw body.
	c, m := newMockClient(t)
	m.Reply(202, ``)
	req, err := c.NewRequest(context.Background(), http.MethodPatch, "builds/1/trace.txt", strings.NewReader("raw part"))
	require.NoError(t, err)
	_, err = c.Do(req, nil)
	require.NoError(t, err)
	assert.Equal(t, "raw part", string(m.Last().Body))
	// Empty options send nothing.
	_, err = send(context.Background(), c, http.MethodPost, route("x"), &encodeOptions{}, nil)
	require.NoError(t, err)
	assert.Empty(t, m.Last().Body)
	assert.Empty(t, m.Last().Header.Get("Content-Type"))
}

func TestRequestErrors(t *testing.T) {
	c, m := newMockClient(t)
	//lint:ignore SA1012 checking the guard
	_, err := c.NewRequest(nil, http.MethodGet, "x", nil) //nolint:staticcheck
	assert.Error(t, err)
	_, err = c.NewRequest(context.Background(), http.MethodGet, "x", 42)
	assert.Error(t, err, "options must be a struct")
	_, err = c.NewRequest(context.Background(), "BAD METHOD", "x", nil)
	assert.Error(t, err)
	_, err = c.NewRequest(context.Background(), http.MethodGet, "%zz", nil)
	assert.Error(t, err)
	_, err = c.NewRequest(context.Background(), http.MethodGet, "https://evil.example/api/v3/projects", nil)
	assert.ErrorContains(t, err, "refusing")
	_, err = c.NewRequest(context.Background(), http.MethodGet, "https://evil.example:xx", nil)
	assert.Error(t, err)
	req, err := c.NewRequest(context.Background(), http.MethodGet, "https://COLLAB.example.com/api/v3/projects?page=2", nil)
	require.NoError(t, err, "same origin, any case")
	assert.Equal(t, "2", req.URL.Query().Get("page"))
	_, err = c.Do(nil, nil)
	assert.Error(t, err)
	_, err = c.BareDo(nil)
	assert.Error(t, err)
	for _, bad := range []any{1.5, nil, "", []int{1}} {
		_, err := send(context.Background(), c, http.MethodGet, route("projects/%s", bad), nil, nil)
		assert.Error(t, err, "%v", bad)
	}
	assert.Zero(t, m.Count(), "no request was sent for bad arguments")
}

func TestClientOptionValidation(t *testing.T) {
	for _, opt := range []ClientOption{
		WithHTTPClient(nil), WithRetry(RetryPolicy{MaxRetries: -1}), WithRetry(RetryPolicy{MinWait: 2, MaxWait: 1}),
		WithJobQueuePath(""), WithJobQueuePath("a/b"),
	} {
		_, err := NewClient("https://h.example", opt)
		assert.Error(t, err)
	}
	c, err := NewClient("https://h.example", WithJobQueuePath("sidekiq"), WithAPIPath("/ci/api/v1/"))
	require.NoError(t, err)
	assert.Equal(t, "sidekiq", c.jobQueue)
	assert.Equal(t, "https://h.example/ci/api/v1/", c.BaseURL().String())
	c, err = NewClient("https://h.example/ci/api/v1")
	require.NoError(t, err)
	assert.Equal(t, "https://h.example/api/v3/", c.BaseURL().String())
}

// TestPathEscaping proves that no argument can change the endpoint: every
// value lands, escaped, in exactly one segment, and the server decodes it
// back to the input.
func TestPathEscaping(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"group/project", "group%2Fproject"},
		{"group/my.site", "group%2Fmy%2Esite"},
		{"..", "%2E%2E"},
		{"../x", "%2E%2E%2Fx"},
		{"../../admin", "%2E%2E%2F%2E%2E%2Fadmin"},
		{"a?b", "a%3Fb"},
		{"a#b", "a%23b"},
		{"%2F", "%252F"},
		{"a b", "a%20b"},
		{"ünï/cödé", "%C3%BCn%C3%AF%2Fc%C3%B6d%C3%A9"},
		{"feature/x.json", "feature%2Fx%2Ejson"},
		{"a;b=c&d", "a%3Bb=c&d"},
		{"\x00", "%00"},
	}
	for _, tt := range tests {
		c, m := newMockClient(t)
		m.Reply(200, `{}`)
		p := route("projects/%s/repository/branches/%s", 7, tt.in)
		require.NoError(t, p.err)
		_, err := send(context.Background(), c, http.MethodGet, p, nil, nil)
		require.NoError(t, err, tt.in)
		rec := m.Last()
		assert.Equal(t, "/api/v3/projects/7/repository/branches/"+tt.want, rec.Path, tt.in)
		segs := strings.Split(rec.Path, "/")
		require.Len(t, segs, 8, "%q must stay one segment", tt.in)
		got, err := url.PathUnescape(segs[7])
		require.NoError(t, err)
		assert.Equal(t, tt.in, got, "the server reads back the input")
		assert.Empty(t, rec.Query, "%q must not start a query", tt.in)
	}
	p := route("projects/%s", int64(1)<<40)
	assert.Equal(t, "projects/1099511627776", p.s)
}

// TestRedirectsNeverCarryCredentialsOffOrigin covers every request, not
// only downloads: a redirect to another host arrives without any token.
func TestRedirectsNeverCarryCredentialsOffOrigin(t *testing.T) {
	var seen http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Clone()
		w.Write([]byte(`{"id": 9}`))
	}))
	defer other.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v3/here" {
			assert.Equal(t, testToken, r.Header.Get("PRIVATE-TOKEN"), "same-origin redirects keep the token")
			w.Write([]byte(`{"id": 1}`))
			return
		}
		if r.URL.Path == "/api/v3/local" {
			http.Redirect(w, r, "/api/v3/here", http.StatusFound)
			return
		}
		http.Redirect(w, r, other.URL+"/elsewhere", http.StatusFound)
	}))
	defer home.Close()
	hc := &http.Client{}
	c, err := NewClient(home.URL, WithPrivateToken(testToken), WithHTTPClient(hc), WithoutRetries())
	require.NoError(t, err)
	c = c.Sudo("alice")
	is, _, err := do[Issue](context.Background(), c, http.MethodGet, route("projects/1"), nil)
	require.NoError(t, err)
	assert.Equal(t, 9, is.ID)
	for _, h := range wire.CredentialHeaders {
		assert.Empty(t, seen.Get(h), h)
	}
	assert.Nil(t, hc.CheckRedirect, "the caller's client is not modified")
	is, _, err = do[Issue](context.Background(), c, http.MethodGet, route("local"), nil)
	require.NoError(t, err)
	assert.Equal(t, 1, is.ID)
}
