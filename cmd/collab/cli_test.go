package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/collabtest"
)

// runCollab runs the command in-process and returns its status and output.
func runCollab(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	code = run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errOut})
	return code, out.String(), errOut.String()
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	srv := collabtest.NewTestServer(t)
	p := srv.Seed.Project(srv.Admin, "p", collab.PrivateVisibility)
	for i := range 250 {
		srv.Seed.Issue(p, srv.Admin, "issue "+strconv.Itoa(i))
	}
	t.Setenv("COLLAB_URL", srv.URL)
	t.Setenv("COLLAB_TOKEN", srv.AdminToken)
	args := []string{"api", "--paginate", "projects/" + strconv.Itoa(p.ID) + "/issues?per_page=50", "--jq", "length"}

	code, out, errOut := runCollab(t, args...)
	if code != 0 || out != "250\n" || errOut != "" {
		t.Fatalf("not a terminal: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	isTerminal = func(io.Writer) bool { return true }
	defer func() { isTerminal = defaultIsTerminal }()
	code, out, errOut = runCollab(t, args...)
	if code != 0 || out != "250\n" {
		t.Fatalf("terminal: exit %d, stdout %q", code, out)
	}
	if !strings.HasSuffix(errOut, "collab: 5 pages, 250 items\n") {
		t.Errorf("terminal: stderr %q, want the final count of pages and items", errOut)
	}
}

// TestTokenRedacted uses a server that repeats the token everywhere it can.
func TestTokenRedacted(t *testing.T) {
	const token = "tok-0123456789abcdef"
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("PRIVATE-TOKEN")
		w.Header().Set("X-Echo", "you sent "+got)
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/fail") {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"message":"401 Unauthorized: bad token `+got+`"}`)
			return
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	defer ts.Close()
	t.Setenv("COLLAB_URL", ts.URL)
	t.Setenv("COLLAB_TOKEN", token)

	code, out, errOut := runCollab(t, "api", "-i", "ok")
	if code != 0 || !strings.Contains(errOut, "X-Echo: you sent [redacted]") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	code2, out2, errOut2 := runCollab(t, "api", "-i", "fail")
	if code2 != exitAuth || !strings.Contains(errOut2, "401 Unauthorized") {
		t.Errorf("exit %d, stderr %q", code2, errOut2)
	}
	for _, s := range []string{out, errOut, out2, errOut2} {
		if strings.Contains(s, token) {
			t.Errorf("the token shows in %q", s)
		}
	}
}

// TestWritesNotRetried: a 502 after a POST may mean the write happened,
// so it is not sent again; a GET is.
func TestWritesNotRetried(t *testing.T) {
	var posts, gets atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int32
		if r.Method == http.MethodPost {
			n = posts.Add(1)
		} else {
			n = gets.Add(1)
		}
		if n == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		io.WriteString(w, `{"ok":true}`)
	}))
	defer ts.Close()
	t.Setenv("COLLAB_URL", ts.URL)
	t.Setenv("COLLAB_TOKEN", "x")

	if code, _, errOut := runCollab(t, "api", "POST", "things", "-f", "a=b"); code != 1 || !strings.Contains(errOut, "502") {
		t.Errorf("POST: exit %d, stderr %q", code, errOut)
	}
	if posts.Load() != 1 {
		t.Errorf("the POST was sent %d times", posts.Load())
	}
	if code, out, _ := runCollab(t, "api", "things"); code != 0 || out != `{"ok":true}` {
		t.Errorf("GET: exit %d, stdout %q", code, out)
	}
	if gets.Load() != 2 {
		t.Errorf("the GET was sent %d times, want 2", gets.Load())
	}
}

// TestFakeStopsOnASignalCaughtBeforeIt cancels the context main's signal
// handler cancels before collab fake starts: the fake must see that signal
// and stop, not serve on as if it had never come.
func TestFakeStopsOnASignalCaughtBeforeIt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"fake", "-addr", "127.0.0.1:0"}, stdio{in: strings.NewReader(""), out: &out, err: &errOut})
	}()
	select {
	case code := <-done:
		if code != 0 || !strings.HasSuffix(out.String(), "collab fake stopped\n") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("collab fake kept serving after the signal its caller caught")
	}
}

// TestHeadersOnEveryPage: -H goes with every page of --paginate, as with
// a single call.
func TestHeadersOnEveryPage(t *testing.T) {
	var requests, withHeader atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("X-Trace") == "on" {
			withHeader.Add(1)
		}
		if r.URL.Query().Get("page") != "2" {
			w.Header().Set("X-Next-Page", "2")
		}
		io.WriteString(w, `[{"n":1}]`)
	}))
	defer ts.Close()
	t.Setenv("COLLAB_URL", ts.URL)
	t.Setenv("COLLAB_TOKEN", "x")

	code, out, errOut := runCollab(t, "api", "--paginate", "-H", "X-Trace: on", "things", "--jq", "length")
	if code != 0 || out != "2\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if requests.Load() != 2 || withHeader.Load() != 2 {
		t.Errorf("%d of %d page requests carried the -H header", withHeader.Load(), requests.Load())
	}
}

// TestFieldsInTheOrderGiven: -f and -F are one list, so the last of a key
// wins and arrays keep their order whichever flag gave each value.
func TestFieldsInTheOrderGiven(t *testing.T) {
	bodies := make(chan string, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- string(b)
		io.WriteString(w, `{}`)
	}))
	defer ts.Close()
	t.Setenv("COLLAB_URL", ts.URL)
	t.Setenv("COLLAB_TOKEN", "x")

	code, _, errOut := runCollab(t, "api", "POST", "things", "-F", "n=1", "-f", "n=2", "-F", "a[]=1", "-f", "a[]=x")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if got, want := <-bodies, `{"a":[1,"x"],"n":"2"}`+"\n"; got != want {
		t.Errorf("body %s, want %s", got, want)
	}
}

// TestReplayStopsWhenInterrupted: after SIGINT (its context cancelled),
// replay stops instead of failing every line left in the file.
func TestReplayStopsWhenInterrupted(t *testing.T) {
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer ts.Close()
	line := `{"kind":"issue","received_at":"2026-01-02T03:04:05Z","headers":{},"body":{"object_kind":"issue"}}` + "\n"
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut strings.Builder
	code := run(ctx, []string{"hook", "replay", "--to", ts.URL}, stdio{in: strings.NewReader(strings.Repeat(line, 3)), out: &out, err: &errOut})
	if code != 1 || hits.Load() != 0 || strings.Contains(errOut.String(), "line ") {
		t.Errorf("exit %d, %d deliveries sent, stderr %q", code, hits.Load(), errOut.String())
	}
}

// TestStandardInputReadOnce: a second reader of standard input would get
// nothing and send an empty value without a word; it is a usage error.
func TestStandardInputReadOnce(t *testing.T) {
	t.Setenv("COLLAB_URL", "http://127.0.0.1:1")
	t.Setenv("COLLAB_TOKEN", "x")
	for _, args := range [][]string{
		{"api", "POST", "things", "-F", "a=@-", "-F", "b=@-"},
		{"api", "POST", "things", "--input", "-", "-F", "a=@-"},
	} {
		code, _, errOut := runCollab(t, args...)
		if code != 2 || !strings.Contains(errOut, "standard input is read once") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// TestEmptySecretFile: an empty secret file would turn the token check
// off without a word; it is a usage error.
func TestEmptySecretFile(t *testing.T) {
	empty := t.TempDir() + "/secret"
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"hook", "listen", "--addr", "127.0.0.1:0", "--secret-file", empty},
		{"hook", "replay", "--to", "http://127.0.0.1:1/", "--secret-file", empty},
	} {
		// Cancelled, so that a listener that does start stops at once.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out, errOut strings.Builder
		code := run(ctx, args, stdio{in: strings.NewReader(""), out: &out, err: &errOut})
		if code != 2 || !strings.Contains(errOut.String(), "is empty") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errOut.String())
		}
	}
}

// TestEmptyTokenFile: an empty token file is a usage error, not a call
// without a token.
func TestEmptyTokenFile(t *testing.T) {
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		io.WriteString(w, `{}`)
	}))
	defer ts.Close()
	empty := t.TempDir() + "/token"
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCollab(t, "api", "--url", ts.URL, "--token-file", empty, "user")
	if code != 2 || calls.Load() != 0 || !strings.Contains(errOut, "is empty") {
		t.Errorf("exit %d, %d calls, stderr %q", code, calls.Load(), errOut)
	}
}

// The command sends through the SDK's transport, not http.DefaultTransport:
// a server that never answers is given up, and calls in parallel reuse
// connections.
func TestAPIUsesTheSDKTransport(t *testing.T) {
	w := newWatcher(nil)
	tr, ok := w.next.(*http.Transport)
	if !ok {
		t.Fatalf("transport is %T", w.next)
	}
	if tr.ResponseHeaderTimeout != collab.DefaultResponseHeaderTimeout || tr.MaxIdleConnsPerHost < 32 {
		t.Errorf("header timeout %v, %d idle connections per host", tr.ResponseHeaderTimeout, tr.MaxIdleConnsPerHost)
	}
	if tr == http.DefaultTransport {
		t.Error("the process-wide default transport")
	}
}
