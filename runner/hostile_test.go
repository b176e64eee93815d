package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/suite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests against loopback servers that misbehave on purpose: each asserts a
// bound (heap, requests) or the exact error, never a duration.

// endlessBuild answers with a build record whose commands never end.
func endlessBuild(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		chunk := []byte(`{"id":1,"token":"bt-x","commands":"` + strings.Repeat("make test; ", 6<<10))
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			chunk = chunk[len(`{"id":1,"token":"bt-x","commands":"`):]
		}
	}
}

func TestEndlessBuildStopsAtTheCeiling(t *testing.T) {
	const ceiling = 4 << 20
	srv := httptest.NewServer(endlessBuild(http.StatusCreated))
	defer srv.Close()
	c, err := NewClient(srv.URL, collab.WithHTTPClient(srv.Client()), collab.WithoutRetries(), collab.WithMaxResponseSize(ceiling), collab.WithLogger(testLogger))
	require.NoError(t, err)
	calls := map[string]func() error{
		"RequestBuild": func() error {
			_, err := c.RequestBuild(context.Background(), testRunnerToken, nil)
			return err
		},
		"UploadArtifacts": func() error {
			_, err := c.UploadArtifacts(context.Background(), 1, testBuildToken, "", strings.NewReader("PK"), nil)
			return err
		},
	}
	for name, call := range calls {
		var err error
		grew := suite.HeapGrowth(func() { err = call() })
		require.ErrorIs(t, err, collab.ErrResponseTooLarge, name)
		var de *collab.DecodeError
		assert.ErrorAs(t, err, &de, name)
		assert.Contains(t, err.Error(), "the limit is 4194304 bytes", name)
		assert.LessOrEqual(t, grew, uint64(2*ceiling), "%s: heap grew %d bytes", name, grew)
		t.Logf("%s: peak heap growth %.1f MiB for a %d MiB ceiling", name, float64(grew)/(1<<20), ceiling>>20)
	}
}

// redirectPair is a home server that answers every request with one
// redirect to another server, and counts what each received.
type redirectPair struct {
	home, other *httptest.Server
	homeHits    atomic.Int64
	otherHits   atomic.Int64
}

func newRedirectPair(t *testing.T, status int, tlsHome bool) *redirectPair {
	p := &redirectPair{}
	p.other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.otherHits.Add(1)
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":1}`)
	}))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.homeHits.Add(1)
		w.Header().Set("Location", p.other.URL+r.URL.Path)
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

// TestRedirectOfTheRunnerTokenIsRefused: a 307 or 308 would resend the
// form body, runner token and all, to another origin (from https, also to
// plain http); so would it the trace part and the artifacts file. The call ends with collab.ErrUnsafeRedirect after one
// request, although the policy allows retries, and the other server never
// sees it.
func TestRedirectOfTheRunnerTokenIsRefused(t *testing.T) {
	for _, tlsHome := range []bool{false, true} {
		for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
			calls := map[string]func(c *Client) error{
				"RequestBuild": func(c *Client) error {
					_, err := c.RequestBuild(context.Background(), testRunnerToken, &Info{Name: "r"})
					return err
				},
				"UpdateBuild": func(c *Client) error {
					return c.UpdateBuild(context.Background(), 7, testRunnerToken, collab.BuildSuccess, nil)
				},
				"AppendTrace": func(c *Client) error {
					_, _, err := c.AppendTrace(context.Background(), 7, testBuildToken, 0, []byte("log"))
					return err
				},
				"UploadArtifacts": func(c *Client) error {
					_, err := c.UploadArtifacts(context.Background(), 7, testBuildToken, "", strings.NewReader("PK"), nil)
					return err
				},
			}
			for name, call := range calls {
				label := fmt.Sprintf("%s %d tls=%v", name, status, tlsHome)
				p := newRedirectPair(t, status, tlsHome)
				c, err := NewClient(p.home.URL, collab.WithHTTPClient(p.home.Client()),
					collab.WithRetry(collab.RetryPolicy{MaxRetries: 3}), collab.WithLogger(testLogger))
				require.NoError(t, err)
				err = call(c)
				require.ErrorIs(t, err, collab.ErrUnsafeRedirect, label)
				var re *collab.RequestError
				assert.ErrorAs(t, err, &re, label)
				assert.NotContains(t, err.Error(), testRunnerToken, label)
				assert.NotContains(t, err.Error(), testBuildToken, label)
				assert.EqualValues(t, 1, p.homeHits.Load(), "%s: a refused redirect is not retried", label)
				assert.Zero(t, p.otherHits.Load(), "%s: the other origin got nothing", label)
			}
		}
	}
}

// echoEverything answers every request with an error that repeats the
// whole request: its query, headers and body, as a careless proxy's error
// page might.
func echoEverything(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 4<<10))
		var hdr strings.Builder
		_ = r.Header.Write(&hdr)
		if status == http.StatusRequestedRangeNotSatisfiable {
			w.Header().Set("Range", "0-3")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		msg := fmt.Sprintf("%s %s\n%s\n%s", r.Method, r.URL.RequestURI(), hdr.String(), body)
		_, _ = fmt.Fprintf(w, `{"message":%q}`, msg)
	}
}

// TestNoTokenInRunnerErrorsOrLogs calls every runner method against servers
// that repeat the request in their error answers, with a debug logger, and
// checks the errors returned and every log line for the runner and build
// tokens.
func TestNoTokenInRunnerErrorsOrLogs(t *testing.T) {
	const runnerTok, buildTok = "rt-e7c1d0aa93f2", "bt-5b0c99e1d4a7"
	for _, status := range []int{http.StatusForbidden, http.StatusBadRequest, http.StatusRequestedRangeNotSatisfiable,
		http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		srv := httptest.NewServer(echoEverything(status))
		var logs bytes.Buffer
		var logMu sync.Mutex
		logger := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c, err := NewClient(srv.URL, collab.WithHTTPClient(srv.Client()), collab.WithRetry(collab.RetryPolicy{MaxRetries: 1}), collab.WithLogger(logger))
		require.NoError(t, err)
		ctx := context.Background()
		var errs []error
		add := func(err error) { errs = append(errs, err) }

		_, err = c.RequestBuild(ctx, runnerTok, &Info{Name: "r"})
		add(err)
		add(c.UpdateBuild(ctx, 1, runnerTok, collab.BuildFailed, collab.Ptr("the whole log")))
		_, _, err = c.AppendTrace(ctx, 1, buildTok, 0, []byte("log"))
		add(err)
		tw := c.NewTraceWriter(ctx, 1, buildTok, TraceWriterOptions{tick: never, MaxFailures: 1, Logger: logger})
		_, _ = io.WriteString(tw, "log line\n")
		add(tw.Close())
		_, err = c.UploadArtifacts(ctx, 1, buildTok, "", strings.NewReader("PK"), &UploadArtifactsOptions{ExpireIn: "1 day"})
		add(err)
		_, err = c.DownloadArtifacts(ctx, 1, buildTok, io.Discard)
		add(err)
		add(c.DeleteArtifacts(ctx, 1, buildTok))
		srv.Close()

		for i, err := range errs {
			require.Error(t, err, "status %d call %d", status, i)
			msg := err.Error()
			watched.Record(msg)
			for _, tok := range []string{runnerTok, buildTok} {
				assert.NotContains(t, msg, tok, "status %d call %d", status, i)
				assert.NotContains(t, fmt.Sprintf("%v %+v %s", err, err, err), tok, "status %d call %d", status, i)
			}
			assert.NotContains(t, msg, "\n", "one line")
		}
		logMu.Lock()
		out := logs.String()
		logMu.Unlock()
		assert.NotEmpty(t, out)
		for _, tok := range []string{runnerTok, buildTok} {
			assert.NotContains(t, out, tok, "status %d: the logs", status)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
