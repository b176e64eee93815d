package fakecmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer is a bytes.Buffer safe to read while serve writes.
// wrote is signalled after every write, so the test waits without spinning.
type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	select {
	case s.wrote <- struct{}{}:
	default:
	}
	return n, err
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// call sends a request with the admin token and an optional JSON body and
// decodes the JSON answer into out (when not nil).
func call(t *testing.T, method, url, token, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("PRIVATE-TOKEN", token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if out != nil {
		require.NoError(t, json.Unmarshal(b, out), string(b))
	}
	return resp.StatusCode
}

func TestServeSeedsLogsAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{wrote: make(chan struct{}, 1)}
	logs := &syncBuffer{wrote: make(chan struct{}, 1)}
	done := make(chan error)
	go func() {
		done <- serve(ctx, "collabfake", options{addr: "127.0.0.1:0", token: "fixed-secret", seed: true, log: true}, out, logs)
	}()
	for !strings.Contains(out.String(), "admin private token") {
		<-out.wrote
	}
	assert.Contains(t, out.String(), "admin private token: fixed-secret\n")
	base := strings.Fields(strings.SplitN(out.String(), "collabfake serving ", 2)[1])[0]

	var projects []map[string]any
	require.Equal(t, http.StatusOK, call(t, "GET", base+"/projects?private_token=fixed-secret", "", "", &projects))
	assert.Len(t, projects, 2, "the seeded projects")
	var issues []map[string]any
	require.Equal(t, http.StatusOK, call(t, "GET", base+"/projects/acme%2Fwebshop/issues", "fixed-secret", "", &issues))
	assert.Len(t, issues, 2)
	assert.Equal(t, http.StatusUnauthorized, call(t, "GET", base+"/projects", "wrong", "", nil))
	assert.NotContains(t, logs.String(), "fixed-secret", "the request log never shows a token")
	assert.Equal(t, 3, strings.Count(logs.String(), "msg=request"), "one line per request")
	assert.Contains(t, logs.String(), "path=/api/v3/projects/acme%2Fwebshop/issues status=200 user=root")

	http.DefaultClient.CloseIdleConnections()
	cancel()
	require.NoError(t, <-done)
	assert.Contains(t, out.String(), "collabfake stopped")

	assert.Error(t, serve(context.Background(), "collabfake", options{addr: "256.0.0.1:bad"}, out, logs), "a bad address is an error")
}

func TestFlags(t *testing.T) {
	var help bytes.Buffer
	_, err := parseFlags("collabfake", []string{"-h"}, &help)
	assert.ErrorIs(t, err, flag.ErrHelp)
	for _, name := range []string{"--addr", "--token", "--log", "--seed", "--replay", "COLLABFAKE_TOKEN"} {
		assert.Contains(t, help.String(), name)
	}
	// Two dashes, as every other collab command takes them, and one, as
	// earlier versions documented them.
	o, err := parseFlags("collabfake", []string{"--addr", ":0", "--token=t2", "--seed"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, options{addr: ":0", token: "t2", seed: true}, o)
	t.Setenv(tokenEnv, "from-env")
	o, err = parseFlags("collabfake", []string{"-addr", ":0", "-seed"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, options{addr: ":0", token: "from-env", seed: true}, o)
	o, err = parseFlags("collabfake", []string{"-token", "from-flag", "-log"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, options{addr: DefaultAddr, token: "from-flag", log: true}, o)
	_, err = parseFlags("collabfake", []string{"extra"}, io.Discard)
	assert.Error(t, err)
}

// TestBinary builds collabfake, starts it with a fixed token, drives it over
// HTTP with JSON bodies, and stops it with SIGTERM.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "collabfake")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/collabfake")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-seed", "-log")
	cmd.Env = append(os.Environ(), tokenEnv+"=env-secret")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	var base string
	for base == "" && lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "collabfake serving "); ok {
			base = rest
		}
	}
	require.NotEmpty(t, base, "the serving line")
	require.True(t, lines.Scan())
	assert.Equal(t, "admin private token: env-secret", lines.Text())

	var created map[string]any
	require.Equal(t, http.StatusCreated, call(t, "POST", base+"/projects/acme%2Fwebshop/issues", "env-secret",
		`{"title":"From JSON","labels":["bug","ui"],"description":"made by a script"}`, &created))
	assert.Equal(t, "From JSON", created["title"])
	assert.Equal(t, []any{"bug", "ui"}, created["labels"])
	iid := created["id"].(float64)
	var updated map[string]any
	require.Equal(t, http.StatusOK, call(t, "PUT", base+"/projects/acme%2Fwebshop/issues/"+jsonInt(iid), "env-secret",
		`{"state_event":"close","assignee_id":null}`, &updated))
	assert.Equal(t, "closed", updated["state"])
	var bad map[string]any
	require.Equal(t, http.StatusBadRequest, call(t, "POST", base+"/projects/acme%2Fwebshop/issues", "env-secret", `["not an object"]`, &bad))
	assert.Equal(t, `400 (Bad request) "title" not given`, bad["message"], "a body that is not an object supplies nothing")
	http.DefaultClient.CloseIdleConnections()

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	for lines.Scan() {
		if lines.Text() == "collabfake stopped" {
			break
		}
	}
	assert.Equal(t, "collabfake stopped", lines.Text())
	require.NoError(t, cmd.Wait(), "a clean exit, status 0")
	assert.NotContains(t, stderr.String(), "env-secret")
	assert.Contains(t, stderr.String(), "method=POST path=/api/v3/projects/acme%2Fwebshop/issues status=201 user=root")
}

func jsonInt(f float64) string { b, _ := json.Marshal(int(f)); return string(b) }

// TestServeDeliversWebhooks registers a hook through the API and receives
// the Issue Hook of an issue created after it; -log logs the delivery.
func TestServeDeliversWebhooks(t *testing.T) {
	type hit struct {
		event string
		body  map[string]any
	}
	hits := make(chan hit, 1)
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		hits <- hit{r.Header.Get("X-Gitlab-Event"), m}
	}))
	defer rc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{wrote: make(chan struct{}, 1)}
	logs := &syncBuffer{wrote: make(chan struct{}, 1)}
	done := make(chan error)
	go func() {
		done <- serve(ctx, "collabfake", options{addr: "127.0.0.1:0", token: "tok", seed: true, log: true, webhookTimeout: time.Second}, out, logs)
	}()
	for !strings.Contains(out.String(), "admin private token") {
		<-out.wrote
	}
	base := strings.Fields(strings.SplitN(out.String(), "collabfake serving ", 2)[1])[0]
	require.Equal(t, http.StatusCreated, call(t, "POST", base+"/projects/acme%2Fwebshop/hooks", "tok",
		`{"url":"`+rc.URL+`/hook","issues_events":true,"push_events":false}`, nil))
	require.Equal(t, http.StatusCreated, call(t, "POST", base+"/projects/acme%2Fwebshop/issues", "tok", `{"title":"Hooked"}`, nil))
	got := <-hits
	assert.Equal(t, "Issue Hook", got.event)
	assert.Equal(t, "Hooked", got.body["object_attributes"].(map[string]any)["title"])
	for !strings.Contains(logs.String(), "msg=webhook") {
		<-logs.wrote
	}
	assert.Contains(t, logs.String(), `kind="Issue Hook" attempt=1 status=200`)

	http.DefaultClient.CloseIdleConnections()
	cancel()
	require.NoError(t, <-done)
}

func TestMainExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		status  int
		errText string
	}{
		{[]string{"-h"}, 0, "Usage: collabfake"},
		{[]string{"-nosuchflag"}, 2, "flag provided but not defined"},
		{[]string{"extra"}, 2, "unexpected arguments"},
		{[]string{"-addr", "256.0.0.1:bad"}, 1, "collabfake: "},
	} {
		var out, errOut bytes.Buffer
		assert.Equal(t, tc.status, Main(context.Background(), "collabfake", tc.args, &out, &errOut), tc.args)
		assert.Contains(t, errOut.String(), tc.errText, tc.args)
	}
}

// TestSignalDuringStartIsKept sends SIGINT the moment the handler is in,
// before the flags are read and the port is open: the fake still starts,
// then stops cleanly with status 0.
func TestSignalDuringStartIsKept(t *testing.T) {
	handlerInstalled = func() { require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT)) }
	defer func() { handlerInstalled = nil }()
	var out, errOut bytes.Buffer
	assert.Equal(t, 0, Main(context.Background(), "collabfake", []string{"-addr", "127.0.0.1:0"}, &out, &errOut), errOut.String())
	assert.Contains(t, out.String(), "collabfake stopped")
}
