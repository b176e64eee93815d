package collab

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/collabsvc/collab/internal/suite"
	"github.com/collabsvc/collab/internal/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests against loopback servers that misbehave on purpose. Each asserts a
// bound (heap, requests) and the exact error, never a duration.

// endless writes a JSON value that never ends: prefix, then unit forever,
// until the client hangs up. With gz it is a gzip bomb, sent whether or not
// the client asked for gzip: gzip members of 1 MiB each, about 1 KiB on the
// wire, one after another (a reader inflates them as one stream).
func endless(prefix, unit string, gz bool) http.HandlerFunc {
	block := strings.Repeat(unit, (1<<20)/len(unit))
	first, rest := []byte(prefix+block), []byte(block)
	if gz {
		first, rest = gzipped(first), gzipped(rest)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Page", "1")
		w.Header().Set("X-Next-Page", "2")
		w.Header().Set("X-Total-Pages", "9")
		if gz {
			w.Header().Set("Content-Encoding", "gzip")
		}
		if _, err := w.Write(first); err != nil {
			return
		}
		for {
			if _, err := w.Write(rest); err != nil {
				return
			}
		}
	}
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func TestHostileBodiesStopAtTheCeiling(t *testing.T) {
	const ceiling = 4 << 20
	bodies := map[string]http.HandlerFunc{
		"endless array":    endless("[", `{"id":1,"name":"x"},`, false),
		"endless string":   endless(`{"id":1,"name":"`, "a", false),
		"gzip bomb":        endless("[", `{"id":1},`, true),
		"gzip bomb string": endless(`{"name":"`, "aaaaaaaa", true),
	}
	calls := map[string]func(c *Client) error{
		"single record": func(c *Client) error { _, _, err := c.Projects.Get(context.Background(), 1); return err },
		"iterator page": func(c *Client) error {
			for _, err := range c.Projects.All(context.Background(), nil, Prefetch(4)) {
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	for name, h := range bodies {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		// The default transport asks for gzip and inflates it itself; one
		// that does not ask gets gzip anyway from this server.
		for _, transport := range []string{"default", "no compression"} {
			if transport != "default" && !strings.HasPrefix(name, "gzip") {
				continue
			}
			opts := []ClientOption{WithoutRetries(), WithMaxResponseSize(ceiling)}
			if transport != "default" {
				opts = append(opts, WithHTTPClient(&http.Client{Transport: &http.Transport{DisableCompression: true}}))
			}
			c, err := NewClient(srv.URL, opts...)
			require.NoError(t, err)
			for callName, call := range calls {
				var err error
				grew := suite.HeapGrowth(func() { err = call(c) })
				label := name + ", " + transport + ", " + callName
				assert.ErrorIs(t, err, ErrResponseTooLarge, label)
				var de *DecodeError
				assert.ErrorAs(t, err, &de, label)
				if err != nil {
					assert.Contains(t, err.Error(), "the limit is 4194304 bytes", label)
					assert.True(t, strings.HasPrefix(err.Error(), "GET /api/v3/projects"), label+": "+err.Error())
				}
				assert.LessOrEqual(t, grew, uint64(2*ceiling), "%s: heap grew %d bytes", label, grew)
				t.Logf("%s: peak heap growth %.1f MiB for a %d MiB ceiling", label, float64(grew)/(1<<20), ceiling>>20)
			}
		}
	}
}

func TestDefaultCeilingAndDeclaredLength(t *testing.T) {
	srv := httptest.NewServer(endless("[", `{"id":1},`, true))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, WithoutRetries())
	require.NoError(t, err)
	var callErr error
	grew := suite.HeapGrowth(func() { _, _, callErr = c.Projects.List(context.Background(), nil) })
	require.ErrorIs(t, callErr, ErrResponseTooLarge)
	assert.Equal(t, "GET /api/v3/projects: decoding response: collab: response body too large: the limit is 33554432 bytes (WithMaxResponseSize)", callErr.Error())
	assert.LessOrEqual(t, grew, uint64(2*DefaultMaxResponseSize))
	t.Logf("default ceiling, gzip bomb: peak heap growth %.1f MiB", float64(grew)/(1<<20))

	// A declared length past the ceiling is refused before reading the body.
	var wrote atomic.Int64
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(1<<30))
		for i := 0; i < 1<<14; i++ {
			n, err := w.Write(bytes.Repeat([]byte(" "), 64<<10))
			wrote.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(big.Close)
	c, err = NewClient(big.URL, WithoutRetries(), WithMaxResponseSize(1<<20))
	require.NoError(t, err)
	_, _, err = c.Projects.Get(context.Background(), 1)
	assert.ErrorIs(t, err, ErrResponseTooLarge)

	_, err = NewClient(big.URL, WithMaxResponseSize(0))
	assert.ErrorIs(t, err, ErrInvalidArgument)
}

func TestCeilingAllowsABodyOfExactlyTheLimit(t *testing.T) {
	body := `[{"id":1}]`
	for _, gz := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if gz {
				w.Header().Set("Content-Encoding", "gzip")
				zw := gzip.NewWriter(w)
				io.WriteString(zw, body)
				zw.Close()
				return
			}
			io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		for limit, ok := range map[int64]bool{int64(len(body)): true, int64(len(body) - 1): false} {
			c, err := NewClient(srv.URL, WithoutRetries(), WithMaxResponseSize(limit),
				WithHTTPClient(&http.Client{Transport: &http.Transport{DisableCompression: true}}))
			require.NoError(t, err)
			ps, _, err := c.Projects.List(context.Background(), nil)
			if ok {
				require.NoError(t, err, "gzip %v", gz)
				assert.Len(t, ps, 1)
			} else {
				assert.ErrorIs(t, err, ErrResponseTooLarge, "gzip %v", gz)
			}
		}
	}
}

// Streams to the caller's writer are not capped, and not buffered either:
// 64 MiB through a 1 MiB ceiling with a small heap.
func TestDownloadsStreamPastTheCeiling(t *testing.T) {
	const size = 64 << 20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("z"), 64<<10)
		for i := 0; i < size/len(chunk); i++ {
			w.Write(chunk)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, WithoutRetries(), WithMaxResponseSize(1<<20))
	require.NoError(t, err)
	var n countingWriter
	var callErr error
	grew := suite.HeapGrowth(func() { _, callErr = c.Builds.Artifacts(context.Background(), 1, 2, &n) })
	require.NoError(t, callErr)
	assert.EqualValues(t, size, n)
	assert.LessOrEqual(t, grew, uint64(8<<20), "the download was not buffered")
}

type countingWriter int64

func (w *countingWriter) Write(p []byte) (int, error) {
	*w += countingWriter(len(p))
	return len(p), nil
}

func TestErrorBodiesKeepTheirOwnLimit(t *testing.T) {
	member := gzipped(bytes.Repeat([]byte("<html>"), 1<<18))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.WriteHeader(http.StatusBadGateway)
		for {
			if _, err := w.Write(member); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	for _, hc := range []*http.Client{{}, {Transport: &http.Transport{DisableCompression: true}}} {
		c, err := NewClient(srv.URL, WithoutRetries(), WithHTTPClient(hc))
		require.NoError(t, err)
		var callErr error
		grew := suite.HeapGrowth(func() { _, _, callErr = c.Projects.Get(context.Background(), 1) })
		var er *ErrorResponse
		require.ErrorAs(t, callErr, &er)
		assert.Len(t, er.Body, maxErrorBody)
		assert.LessOrEqual(t, grew, uint64(4<<20))
	}
}

// newCountingServer answers each request with h and counts them.
func newCountingServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request, n int64)) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(w, r, n.Add(1))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func pageParam(r *http.Request) int {
	p, _ := strconv.Atoi(r.URL.Query().Get("page"))
	return max(p, 1)
}

func TestIterationsAlwaysEnd(t *testing.T) {
	// stuckAtPage1 answers page 1 whatever is asked, and points at page 2.
	stuckAtPage1 := func(w http.ResponseWriter, r *http.Request, base string) {
		w.Header().Set("X-Page", "1")
		w.Header().Set("X-Next-Page", "2")
		w.Header().Set("X-Total-Pages", "5")
		io.WriteString(w, `[{"id":1}]`)
	}
	// absurdTotal serves pages 1 to last with one id each (the page number),
	// then empty pages, every one claiming 2147483647 pages in all.
	absurdTotal := func(last int) func(w http.ResponseWriter, r *http.Request, base string) {
		return func(w http.ResponseWriter, r *http.Request, base string) {
			p := pageParam(r)
			w.Header().Set("X-Page", strconv.Itoa(p))
			w.Header().Set("X-Next-Page", strconv.Itoa(p+1))
			w.Header().Set("X-Total-Pages", "2147483647")
			if p > last {
				io.WriteString(w, `[]`)
				return
			}
			fmt.Fprintf(w, `[{"id":%d}]`, p)
		}
	}
	cases := []struct {
		name     string
		serve    func(w http.ResponseWriter, r *http.Request, base string)
		prefetch int
		ids      []int
		requests int64
		err      string // "" for a clean end
	}{
		{
			name: "link next to the same page",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				w.Header().Set("Link", `<`+base+`/api/v3/projects?page=1&per_page=100>; rel="next"`)
				fmt.Fprintf(w, `[{"id":%d}]`, pageParam(r))
			},
			ids: []int{1}, requests: 1,
			err: "GET /api/v3/projects: collab: pagination loop: the next link points back to page 1, after page 1",
		},
		{
			name: "link next back to an earlier page",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				p := pageParam(r)
				next := p + 1
				if p == 3 {
					next = 2
				}
				w.Header().Set("Link", fmt.Sprintf(`<%s/api/v3/projects?page=%d&per_page=100>; rel="next"`, base, next))
				fmt.Fprintf(w, `[{"id":%d}]`, p)
			},
			ids: []int{1, 2, 3}, requests: 3,
			err: "GET /api/v3/projects: collab: pagination loop: the next link points back to page 2, after page 3",
		},
		{
			name: "link next cycling between cursors",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				cur := r.URL.Query().Get("cursor")
				next := map[string]string{"": "a", "a": "b", "b": "a"}[cur]
				w.Header().Set("Link", `<`+base+`/api/v3/projects?cursor=`+next+`>; rel="next"`)
				fmt.Fprintf(w, `[{"id":%d}]`, map[string]int{"": 1, "a": 2, "b": 3}[cur])
			},
			ids: []int{1, 2, 3}, requests: 3,
			err: "GET /api/v3/projects: collab: pagination loop: the next link points back to a page already fetched",
		},
		{
			name:  "X-Page stuck at 1 with X-Next-Page 2",
			serve: stuckAtPage1,
			ids:   []int{1}, requests: 2,
			err: "GET /api/v3/projects: collab: pagination loop: asked for page 2, the server answered page 1",
		},
		{
			name:  "X-Page stuck at 1 with prefetch",
			serve: stuckAtPage1,
			// Pages 2 to 5 go out together; the first answer ends the walk.
			prefetch: 4, ids: []int{1}, requests: -5,
			err: "GET /api/v3/projects: collab: pagination loop: asked for page 2, the server answered page 1",
		},
		{
			name: "X-Next-Page going backwards",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				p := pageParam(r)
				w.Header().Set("X-Page", strconv.Itoa(p))
				w.Header().Set("X-Next-Page", strconv.Itoa(map[int]int{1: 2, 2: 1}[p]))
				fmt.Fprintf(w, `[{"id":%d}]`, p)
			},
			ids: []int{1, 2}, requests: 2,
			err: "GET /api/v3/projects: collab: pagination loop: next page 1 after page 2",
		},
		{
			name:  "absurd total, empty after page 1",
			serve: absurdTotal(1),
			// At most pages + Prefetch: page 1, then pages 2 to 5 at once.
			prefetch: 4, ids: []int{1}, requests: -5,
		},
		{
			name:  "absurd total, three real pages",
			serve: absurdTotal(3),
			// A sequential walk sends 4; the window runs Prefetch pages
			// past page 3: at most pages + Prefetch = 7.
			prefetch: 4, ids: []int{1, 2, 3}, requests: -7,
		},
		{
			name: "pages of nulls only",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				p := pageParam(r)
				w.Header().Set("X-Page", strconv.Itoa(p))
				w.Header().Set("X-Next-Page", strconv.Itoa(p+1))
				if p == 1 {
					io.WriteString(w, `[null,{"id":1},null]`)
					return
				}
				io.WriteString(w, `[null,null]`)
			},
			ids: []int{1}, requests: 2,
		},
		{
			name: "link next to another list",
			serve: func(w http.ResponseWriter, r *http.Request, base string) {
				w.Header().Set("Link", `<`+base+`/api/v3/users?page=2>; rel="next"`)
				io.WriteString(w, `[{"id":1}]`)
			},
			ids: []int{1}, requests: 1,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var base string
			srv, n := newCountingServer(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
				w.Header().Set("Content-Type", "application/json")
				tc.serve(w, r, base)
			})
			base = srv.URL
			c, err := NewClient(srv.URL, WithoutRetries())
			require.NoError(t, err)
			var ids []int
			var last error
			for p, err := range c.Projects.All(context.Background(), nil, Prefetch(tc.prefetch)) {
				if err != nil {
					last = err
					continue
				}
				require.NotNil(t, p)
				ids = append(ids, p.ID)
				require.Less(t, len(ids), 100, "the walk did not end")
			}
			assert.Equal(t, tc.ids, ids)
			if tc.requests > 0 {
				assert.Equal(t, tc.requests, n.Load(), "requests")
			} else {
				assert.LessOrEqual(t, n.Load(), -tc.requests, "requests")
				assert.GreaterOrEqual(t, n.Load(), int64(len(tc.ids)+1), "requests")
			}
			if tc.err == "" {
				assert.NoError(t, last)
				return
			}
			assert.ErrorIs(t, last, ErrPaginationLoop)
			if last != nil {
				assert.Equal(t, tc.err, last.Error())
			}
		})
	}
}

func TestNoNilRecords(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(200, `[null, {"id":2}, null]`)
	ps, _, err := c.Projects.List(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, ps, 1)
	assert.Equal(t, 2, ps[0].ID)

	m.Reply(200, `[null, {"id":2}]`)
	n := 0
	for p, err := range c.Projects.All(context.Background(), nil) {
		require.NoError(t, err)
		require.NotNil(t, p)
		n++
	}
	assert.Equal(t, 1, n)

	m.Reply(200, `null`)
	ps, _, err = c.Projects.List(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, ps)
}

// redirectPair is the client's origin, which redirects as told, and another
// origin that records what reached it.
type redirectPair struct {
	home, other *httptest.Server
	homeHits    atomic.Int64
	mu          sync.Mutex
	otherGot    []*http.Request
	otherBodies []string
}

func newRedirectPair(t *testing.T, status int, tlsHome bool, target func(p *redirectPair) string) *redirectPair {
	p := &redirectPair{}
	p.other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.otherGot = append(p.otherGot, r)
		p.otherBodies = append(p.otherBodies, string(b))
		p.mu.Unlock()
		if r.URL.Query().Get("back") != "" {
			http.Redirect(w, r, p.home.URL+"/api/v3/projects/9", http.StatusFound)
			return
		}
		io.WriteString(w, `{"id":1}`)
	}))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.homeHits.Add(1) > 1 && r.URL.Path == "/api/v3/projects/9" {
			assert.Empty(t, r.Header.Get("PRIVATE-TOKEN"), "credentials came back after leaving the origin")
			io.WriteString(w, `{"id":9}`)
			return
		}
		w.Header().Set("Location", target(p))
		w.WriteHeader(status)
	})
	if tlsHome {
		p.home = httptest.NewTLSServer(h)
	} else {
		p.home = httptest.NewServer(h)
	}
	t.Cleanup(func() { p.home.Close(); p.other.Close() })
	return p
}

func (p *redirectPair) client(t *testing.T, opts ...ClientOption) *Client {
	hc := p.home.Client() // trusts the TLS home; plain for the other
	opts = append([]ClientOption{WithPrivateToken(testToken), WithHTTPClient(hc), WithRetry(RetryPolicy{MaxRetries: 3})}, opts...)
	c, err := NewClient(p.home.URL, opts...)
	require.NoError(t, err)
	return c
}

type tokenForm struct {
	Token string `url:"token"`
	Name  string `url:"name"`
}

func TestRedirectsNeverCarrySecrets(t *testing.T) {
	toOther := func(p *redirectPair) string { return p.other.URL + "/store?x=1" }
	// The other server listens on the same host, 127.0.0.1: from an https
	// home it is a downgrade to plain http on the same host.
	for _, tlsHome := range []bool{false, true} {
		for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
			name := fmt.Sprintf("%d tls=%v", status, tlsHome)
			p := newRedirectPair(t, status, tlsHome, toOther)
			c := p.client(t)

			// A form body with the runner token is never resent elsewhere.
			req, err := c.NewRequest(context.Background(), http.MethodPost, "builds/register", &tokenForm{Token: "rt-secret-99", Name: "n"})
			require.NoError(t, err)
			_, err = c.Do(req, nil)
			require.ErrorIs(t, err, ErrUnsafeRedirect, name)
			var re *RequestError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, "POST /api/v3/builds/register: collab: refused a redirect that would send the request body to another origin (to "+p.other.URL+")", err.Error())
			assert.EqualValues(t, 1, p.homeHits.Load(), "%s: a refused redirect is not retried", name)
			assert.Empty(t, p.otherGot, name)

			// Nor a PUT, nor a seekable upload.
			_, _, err = c.Issues.Update(context.Background(), 1, 2, &UpdateIssueOptions{Title: Ptr("t")})
			assert.ErrorIs(t, err, ErrUnsafeRedirect, name)
			_, _, err = c.Projects.UploadFile(context.Background(), 1, strings.NewReader("file body"), "f.txt")
			assert.ErrorIs(t, err, ErrUnsafeRedirect, name)
			assert.Empty(t, p.otherGot, name)

			// A GET goes, without any credential header.
			_, _, err = c.Projects.Get(context.Background(), 1)
			require.NoError(t, err, name)
			require.Len(t, p.otherGot, 1)
			for _, h := range wire.CredentialHeaders {
				assert.Empty(t, p.otherGot[0].Header.Get(h), "%s: %s", name, h)
			}
		}
	}
}

func TestRedirectBackHomeStaysWithoutCredentials(t *testing.T) {
	p := newRedirectPair(t, http.StatusFound, false, func(p *redirectPair) string { return p.other.URL + "/hop?back=1" })
	c := p.client(t, WithOAuthToken(testToken))
	got, _, err := c.Sudo("admin").Projects.Get(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, 9, got.ID)
	require.Len(t, p.otherGot, 1)
	assert.Empty(t, p.otherGot[0].Header.Get("Authorization"))
	assert.Empty(t, p.otherGot[0].Header.Get("SUDO"))
}

func TestRedirectWithinTheOriginKeepsTheBody(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.URL.Path+" "+string(b)+" "+r.Header.Get("PRIVATE-TOKEN"))
		if r.URL.Path == "/api/v3/old" {
			http.Redirect(w, r, "/api/v3/new", http.StatusPermanentRedirect)
			return
		}
		io.WriteString(w, `{}`)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, WithPrivateToken(testToken), WithoutRetries())
	require.NoError(t, err)
	req, err := c.NewRequest(context.Background(), http.MethodPost, "old", &tokenForm{Token: "t", Name: "n"})
	require.NoError(t, err)
	_, err = c.Do(req, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"/api/v3/old name=n&token=t " + testToken, "/api/v3/new name=n&token=t " + testToken}, got)
}

func TestErrorTextIsCleanAndRedacted(t *testing.T) {
	const oauth = "oauth-secret-4c1d"
	cases := []struct {
		name, body, want string
		status           int
	}{
		{"ansi and line breaks", `{"message":"\u001b[31mboom\u001b[0m\r\nX-Injected: yes\u202e"}`,
			`GET /api/v3/projects/1: 500 Internal Server Error: \x1b[31mboom\x1b[0m X-Injected: yes\u202e`, 500},
		{"json 401 echoing the token", `{"message":"401 Unauthorized: token ` + oauth + ` is invalid"}`,
			`GET /api/v3/projects/1: 401 Unauthorized: token [redacted] is invalid`, 401},
		{"proxy page dumping headers", "<html><body><h1>502</h1><pre>Authorization: Bearer " + oauth + "\nUser-Agent: x</pre></body></html>",
			`GET /api/v3/projects/1: 502 Bad Gateway: Authorization: [redacted] User-Agent: x`, 502},
		{"url-escaped echo", `{"error":"bad request: Authorization=Bearer+` + oauth + `"}`,
			`GET /api/v3/projects/1: 400 Bad Request: bad request: Authorization=[redacted]`, 400},
		{"long message", `{"message":"` + strings.Repeat("ab", 5000) + `"}`,
			`GET /api/v3/projects/1: 403 Forbidden: ` + strings.Repeat("ab", 150) + "…", 403},
	}
	for _, tc := range cases {
		c, m := newMockClient(t, WithOAuthToken(watched.Secret(oauth)))
		m.Reply(tc.status, tc.body)
		_, _, err := c.Projects.Get(context.Background(), 1)
		require.Error(t, err)
		assert.Equal(t, tc.want, err.Error(), tc.name)
		var er *ErrorResponse
		require.ErrorAs(t, err, &er)
		assert.NotContains(t, string(er.Body), oauth, tc.name)
	}
}

func TestErrorsNameTheirRequestAlike(t *testing.T) {
	c, m := newMockClient(t)
	m.Fail(errors.New("connection reset by peer"))
	_, _, err := c.Projects.Get(context.Background(), "g/p")
	assert.Equal(t, "GET /api/v3/projects/g%2Fp: connection reset by peer", err.Error())
	m.Reply(200, `{"id":"x"}`)
	_, _, err = c.Projects.Get(context.Background(), "g/p")
	assert.True(t, strings.HasPrefix(err.Error(), "GET /api/v3/projects/g%2Fp: decoding response: "), err.Error())
	m.Reply(404, `{"message":"404 Project Not Found"}`)
	_, _, err = c.Projects.Get(context.Background(), "g/p")
	assert.Equal(t, "GET /api/v3/projects/g%2Fp: 404 Not Found: Project Not Found", err.Error())
}

func TestRunnerTokensInBodiesAndHeadersAreRedacted(t *testing.T) {
	const runnerTok, buildTok = "rt-0a1b2c3d4e5f", "bt-9f8e7d6c5b4a"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Echo", r.Header.Get("BUILD-TOKEN"))
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"message":"denied %s %s %s"}`, b, r.Header.Get("BUILD-TOKEN"), r.URL.RawQuery)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, WithoutRetries(), WithAPIPath("ci/api/v1"))
	require.NoError(t, err)
	req, err := c.NewRequest(context.Background(), http.MethodPut, "builds/1", &tokenForm{Token: watched.Secret(runnerTok), Name: "n"})
	require.NoError(t, err)
	req.Header.Set("BUILD-TOKEN", watched.Secret(buildTok))
	_, err = c.Do(req, nil)
	assert.Equal(t, "PUT /ci/api/v1/builds/1: 403 Forbidden: denied name=n&token=[redacted] [redacted]", err.Error())
	var er *ErrorResponse
	require.ErrorAs(t, err, &er)
	assert.Equal(t, "[redacted]", er.Header.Get("X-Echo"), "response headers repeating a token")

	req, err = c.NewRequest(context.Background(), http.MethodGet, "builds/1?token="+runnerTok, nil)
	require.NoError(t, err)
	_, err = c.Do(req, nil)
	assert.Equal(t, "GET /ci/api/v1/builds/1: 403 Forbidden: denied token=[redacted]", err.Error())
}

// TestOneCallAtMostThePolicysAttempts: under a constant 429 or 503, every
// kind of call makes at most 1+MaxRetries requests, exactly as the policy
// says (writes are not retried on 503, a one-shot body never twice).
func TestOneCallAtMostThePolicysAttempts(t *testing.T) {
	ctx := context.Background()
	calls := []struct {
		name     string
		call     func(c *Client) error
		retry503 bool
		oneShot  bool
	}{
		{"GET", func(c *Client) error { _, _, err := c.Projects.Get(ctx, 1); return err }, true, false},
		{"list", func(c *Client) error { _, _, err := c.Projects.List(ctx, nil); return err }, true, false},
		{"iterator page", func(c *Client) error {
			for _, err := range c.Projects.All(ctx, nil, Prefetch(4)) {
				if err != nil {
					return err
				}
			}
			return nil
		}, true, false},
		{"POST", func(c *Client) error {
			_, _, err := c.Issues.Create(ctx, 1, &CreateIssueOptions{Title: "t"})
			return err
		}, false, false},
		{"PUT", func(c *Client) error {
			_, _, err := c.Issues.Update(ctx, 1, 2, &UpdateIssueOptions{Title: Ptr("t")})
			return err
		}, true, false},
		{"DELETE", func(c *Client) error { _, err := c.Issues.Delete(ctx, 1, 2); return err }, true, false},
		{"multipart upload", func(c *Client) error {
			_, _, err := c.Projects.UploadFile(ctx, 1, strings.NewReader("data"), "f.txt")
			return err
		}, false, false},
		{"one-shot multipart upload", func(c *Client) error {
			_, _, err := c.Projects.UploadFile(ctx, 1, io.MultiReader(strings.NewReader("data")), "f.txt")
			return err
		}, false, true},
		{"streaming download", func(c *Client) error { _, err := c.Builds.Artifacts(ctx, 1, 2, io.Discard); return err }, true, false},
	}
	policy := RetryPolicy{MaxRetries: 3}
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		srv, n := newCountingServer(t, func(w http.ResponseWriter, r *http.Request, _ int64) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Retry-After", "3600") // capped by MaxWait, here 0
			w.WriteHeader(status)
		})
		c, err := NewClient(srv.URL, WithRetry(policy), WithPrivateToken(testToken))
		require.NoError(t, err)
		for _, tc := range calls {
			n.Store(0)
			err := tc.call(c)
			want := int64(1 + policy.MaxRetries)
			if tc.oneShot || (status == http.StatusServiceUnavailable && !tc.retry503) {
				want = 1
			}
			assert.Equal(t, want, n.Load(), "%d %s", status, tc.name)
			if status == http.StatusTooManyRequests {
				assert.ErrorIs(t, err, ErrTooManyRequests, tc.name)
			} else {
				assert.ErrorIs(t, err, ErrServer, tc.name)
			}
		}
	}
}

type projectID int32

func TestAnyIntegerIDAndNoNonPositiveOne(t *testing.T) {
	c, m := newMockClient(t)
	m.Reply(200, `{"id":7}`)
	for _, id := range []any{int(7), int8(7), int16(7), int32(7), int64(7), uint(7), uint8(7), uint16(7), uint32(7), uint64(7), projectID(7)} {
		p, _, err := c.Projects.Get(context.Background(), id)
		require.NoError(t, err, "%T", id)
		assert.Equal(t, 7, p.ID)
		assert.Equal(t, "/api/v3/projects/7", m.Last().Path, "%T", id)
	}
	before := m.Count()
	for _, id := range []any{0, -1, int8(-3), int64(0), uint(0), projectID(-2)} {
		_, _, err := c.Projects.Get(context.Background(), id)
		require.ErrorIs(t, err, ErrInvalidArgument, "%T %v", id, id)
		var ae *ArgumentError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, "projects id", ae.Arg)
	}
	_, _, err := c.Issues.Get(context.Background(), 1, -5)
	assert.ErrorIs(t, err, ErrInvalidArgument)
	_, _, err = c.Projects.Get(context.Background(), 1.5)
	assert.EqualError(t, err, "collab: invalid argument projects id: must be an integer id or a string path, got float64")
	assert.Equal(t, before, m.Count(), "nothing was sent")
}

func TestEndlessHeadersAreBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 200 OK\r\n")
		line := "X-Junk: " + strings.Repeat("j", 4000) + "\r\n"
		for i := 0; i < 5000; i++ { // 20 MB of headers
			if _, err := buf.WriteString(line); err != nil {
				return
			}
		}
		buf.Flush()
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, WithoutRetries(), WithMaxResponseSize(1<<20))
	require.NoError(t, err)
	var callErr error
	grew := suite.HeapGrowth(func() { _, _, callErr = c.Projects.Get(context.Background(), 1) })
	var re *RequestError
	require.ErrorAs(t, callErr, &re)
	assert.Contains(t, callErr.Error(), "GET /api/v3/projects/1: ")
	assert.LessOrEqual(t, grew, uint64(2<<20), "heap grew %d", grew)
}

// A list of tiny elements would cost far more decoded than on the wire: each
// "{}" is a whole record. Within the byte ceiling it is still refused, and
// honest records of the same total size are not.
func TestTinyRecordsCannotMultiplyTheCost(t *testing.T) {
	const ceiling = 4 << 20
	for _, unit := range []string{`{},`, `1,`, `{"id":1},`} {
		body := "[" + strings.Repeat(unit, (ceiling-64)/len(unit)) + "{}]"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Page", "1")
			io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		c, err := NewClient(srv.URL, WithoutRetries(), WithMaxResponseSize(ceiling))
		require.NoError(t, err)
		var callErr error
		grew := suite.HeapGrowth(func() {
			for _, err := range c.Projects.All(context.Background(), nil) {
				if err != nil {
					callErr = err
				}
			}
		})
		require.ErrorIs(t, callErr, ErrResponseTooLarge, unit)
		assert.Contains(t, callErr.Error(), "records of this list would take", unit)
		assert.LessOrEqual(t, grew, uint64(2*ceiling), "%s: heap grew %d", unit, grew)
	}

	// Real records close to the ceiling decode.
	one, err := os.ReadFile("testdata/projects_project.json")
	require.NoError(t, err)
	records := (ceiling - 64) / (len(one) + 1)
	body := "[" + strings.Repeat(string(one)+",", records-1) + string(one) + "]"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }))
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, WithoutRetries(), WithMaxResponseSize(ceiling))
	require.NoError(t, err)
	ps, _, err := c.Projects.List(context.Background(), nil)
	require.NoError(t, err)
	assert.Len(t, ps, records)
}
