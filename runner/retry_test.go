package runner

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/collabsvc/collab"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOneRetryLayer counts the requests that one call of every kind sends to
// a loopback server that always answers 429, or always 503. The client's
// RetryPolicy is the only retry layer: a call never sends more than its
// attempts (MaxRetries+1). The core retries a 429 for every method, and a
// 503 only for GET, PUT and DELETE (a POST or PATCH may have been applied).
func TestOneRetryLayer(t *testing.T) {
	const maxRetries = 3
	const attempts = maxRetries + 1
	calls := []struct {
		name       string
		call       func(ctx context.Context, c *Client) error
		on429      int
		on503      int
		firstError error // what a 503 gives
	}{
		{"RequestBuild", func(ctx context.Context, c *Client) error {
			_, err := c.RequestBuild(ctx, testRunnerToken, &Info{Name: "r"})
			return err
		}, attempts, 1, collab.ErrServer},
		{"UpdateBuild", func(ctx context.Context, c *Client) error {
			return c.UpdateBuild(ctx, 1, testRunnerToken, collab.BuildSuccess, nil)
		}, attempts, attempts, collab.ErrServer},
		{"AppendTrace", func(ctx context.Context, c *Client) error {
			_, _, err := c.AppendTrace(ctx, 1, testBuildToken, 0, []byte("log"))
			return err
		}, attempts, 1, collab.ErrServer},
		{"TraceWriter append", func(ctx context.Context, c *Client) error {
			// MaxFailures 1: the writer stops after its first failed call.
			tw := c.NewTraceWriter(ctx, 1, testBuildToken, TraceWriterOptions{tick: never, MaxFailures: 1})
			if _, err := io.WriteString(tw, "log line\n"); err != nil {
				return err
			}
			return tw.Close()
		}, attempts, 1, collab.ErrServer},
		{"UploadArtifacts seekable", func(ctx context.Context, c *Client) error {
			_, err := c.UploadArtifacts(ctx, 1, testBuildToken, "", bytes.NewReader([]byte("PK zip")), nil)
			return err
		}, attempts, 1, collab.ErrServer},
		{"UploadArtifacts stream", func(ctx context.Context, c *Client) error {
			_, err := c.UploadArtifacts(ctx, 1, testBuildToken, "", onlyReader{strings.NewReader("PK zip")}, nil)
			return err
		}, 1, 1, collab.ErrServer},
		{"DownloadArtifacts", func(ctx context.Context, c *Client) error {
			_, err := c.DownloadArtifacts(ctx, 1, testBuildToken, io.Discard)
			return err
		}, attempts, attempts, collab.ErrServer},
		{"DeleteArtifacts", func(ctx context.Context, c *Client) error {
			return c.DeleteArtifacts(ctx, 1, testBuildToken)
		}, attempts, attempts, collab.ErrServer},
	}
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		for _, tc := range calls {
			t.Run(tc.name+"/"+http.StatusText(status), func(t *testing.T) {
				var requests atomic.Int64
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					requests.Add(1)
					_, _ = io.Copy(io.Discard, r.Body)
					w.Header().Set("Retry-After", "0")
					http.Error(w, `{"message":"try later"}`, status)
				}))
				defer srv.Close()
				// MinWait 0: the policy's attempts without its waits.
				c, err := NewClient(srv.URL, collab.WithHTTPClient(srv.Client()),
					collab.WithRetry(collab.RetryPolicy{MaxRetries: maxRetries}), collab.WithLogger(testLogger))
				require.NoError(t, err)

				err = tc.call(context.Background(), c)
				want := tc.on503
				if status == http.StatusTooManyRequests {
					want = tc.on429
					assert.ErrorIs(t, err, collab.ErrTooManyRequests)
				} else {
					assert.ErrorIs(t, err, tc.firstError)
				}
				got := requests.Load()
				t.Logf("%-26s constant %d: %d requests (policy attempts %d)", tc.name, status, got, attempts)
				assert.Equal(t, int64(want), got)
				assert.LessOrEqual(t, got, int64(attempts))
			})
		}
	}
}

// TestTraceWriterCallsUnderConstantFailure shows what one call of the
// writer is: after a failed call, each tick makes exactly one new call, and
// each call sends at most the policy's attempts.
func TestTraceWriterCallsUnderConstantFailure(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var requests atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				http.Error(w, `{"message":"try later"}`, status)
			}))
			defer srv.Close()
			c, err := NewClient(srv.URL, collab.WithHTTPClient(srv.Client()), collab.WithRetry(collab.RetryPolicy{MaxRetries: 2}))
			require.NoError(t, err)
			tick := make(chan time.Time)
			tw := c.NewTraceWriter(context.Background(), 1, testBuildToken, TraceWriterOptions{tick: tick, MaxFailures: 4})
			_, err = io.WriteString(tw, "log line\n")
			require.NoError(t, err)
			for range 4 { // below FlushSize: only ticks send
				tick <- time.Time{}
			}
			err = tw.Close()
			assert.ErrorContains(t, err, "failed 4 times in a row")
			perCall := int64(3)
			if status == http.StatusServiceUnavailable {
				perCall = 1
			}
			assert.Equal(t, 4*perCall, requests.Load(), "one call per tick")
		})
	}
}
