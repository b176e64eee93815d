package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/collabsvc/collab"
)

// UploadOptions are the optional parameters of UploadArtifacts.
type UploadOptions struct {
	// ExpireIn is how long the server keeps the artifacts, such as
	// "7 days"; empty keeps the server's default. Sent in the query.
	ExpireIn string
}

// uploadRetries is how many times a rewindable upload is sent again after a
// connection error or a 5xx.
const uploadRetries = 3

func defaultUploadBackoff(n int) time.Duration {
	return min(time.Second<<min(n-1, 5), 30*time.Second)
}

// UploadArtifacts streams r to the server as the build's artifacts file,
// under the file name name ("artifacts.zip" when empty). The body is
// written through a pipe as it is sent, so r is never held in memory.
// It returns the build record. A 413 (the file exceeds the server's limit)
// matches collab.ErrRequestTooLarge; a 403 (a bad token, or the build is no
// longer running or was erased) collab.ErrForbidden.
//
// Retries. The core retries a POST only on 429 or a refused connection, and
// only when the body can be rewound. An upload replaces the build's
// artifacts, so sending it again cannot duplicate anything: when r is an
// io.ReadSeeker, UploadArtifacts rewinds it to where it was and also sends
// again after a connection error or a 5xx, up to 3 times. Any other reader
// is sent once.
//
// UploadArtifacts returns only once its copying goroutine has ended, so r
// must not block forever in Read; a cancelled context stops the upload.
//
// API: POST /builds/:id/artifacts (runner)
func (c *Client) UploadArtifacts(ctx context.Context, id int, buildToken, name string, r io.Reader, opts *UploadOptions) (*collab.Build, error) {
	if r == nil {
		return nil, errors.New("runner: nil artifacts reader")
	}
	if name == "" {
		name = "artifacts.zip"
	}
	path := fmt.Sprintf("builds/%d/artifacts", id)
	if opts != nil && opts.ExpireIn != "" {
		path += "?" + url.Values{"expire_in": {opts.ExpireIn}}.Encode()
	}
	if err := checkBuildToken(buildToken); err != nil {
		return nil, err
	}
	req, finish, err := c.c.NewUploadRequest(ctx, path, "file", name, r)
	if err != nil {
		return nil, err
	}
	defer finish()
	req.Header.Set("BUILD-TOKEN", buildToken)
	for n := 1; ; n++ {
		var b collab.Build
		_, err := c.c.Do(req, &b)
		if err == nil {
			return &b, nil
		}
		if req.GetBody == nil || n > uploadRetries || !retryable(err) || ctx.Err() != nil {
			return nil, err
		}
		if err := sleepCtx(ctx, c.uploadBackoff(n)); err != nil {
			return nil, err
		}
		if req.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// DownloadArtifacts streams the build's artifacts file into w and returns
// the number of bytes written. A 404 (no artifacts) matches
// collab.ErrNotFound; a 403 (a bad token) collab.ErrForbidden. A redirect
// to storage on another host is followed without the build token.
//
// API: GET /builds/:id/artifacts (runner)
func (c *Client) DownloadArtifacts(ctx context.Context, id int, buildToken string, w io.Writer) (int64, error) {
	if w == nil {
		return 0, errors.New("runner: nil writer")
	}
	req, err := c.buildRequest(ctx, http.MethodGet, fmt.Sprintf("builds/%d/artifacts", id), buildToken, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "*/*")
	cw := &countingWriter{w: w}
	_, err = c.c.Do(req, cw)
	return cw.n, err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// DeleteArtifacts removes the build's artifacts file.
//
// API: DELETE /builds/:id/artifacts (runner)
func (c *Client) DeleteArtifacts(ctx context.Context, id int, buildToken string) error {
	req, err := c.buildRequest(ctx, http.MethodDelete, fmt.Sprintf("builds/%d/artifacts", id), buildToken, nil)
	if err != nil {
		return err
	}
	_, err = c.c.Do(req, nil)
	return err
}
