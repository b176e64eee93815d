package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"sync"
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
// Contract: POST /builds/:id/artifacts (runner)
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
	up := &upload{name: name, src: r, boundary: randomBoundary()}
	if s, ok := r.(io.ReadSeeker); ok {
		if pos, err := s.Seek(0, io.SeekCurrent); err == nil {
			up.seeker, up.start = s, pos
		}
	}
	defer up.stop()
	for n := 1; ; n++ {
		b, err := c.uploadOnce(ctx, path, buildToken, up)
		if err == nil {
			return b, nil
		}
		if up.seeker == nil || n > uploadRetries || !retryable(err) || ctx.Err() != nil {
			return nil, err
		}
		if err := sleepCtx(ctx, c.uploadBackoff(n)); err != nil {
			return nil, err
		}
	}
}

func (c *Client) uploadOnce(ctx context.Context, path, buildToken string, up *upload) (*collab.Build, error) {
	body, err := up.body()
	if err != nil {
		return nil, err
	}
	req, err := c.buildRequest(ctx, http.MethodPost, path, buildToken, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "multipart/form-data; boundary="+up.boundary)
	if up.seeker != nil {
		req.GetBody = func() (io.ReadCloser, error) { return up.body() }
	}
	var b collab.Build
	if _, err := c.c.Do(req, &b); err != nil {
		return nil, err
	}
	return &b, nil
}

// upload produces multipart bodies for one file. Each body runs its own
// copying goroutine; a new body (for a retry) first stops the previous one
// and rewinds the source.
type upload struct {
	name, boundary string
	src            io.Reader
	seeker         io.ReadSeeker // non-nil when src can be rewound
	start          int64

	mu  sync.Mutex
	cur *pipeBody
}

func (u *upload) body() (*pipeBody, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cur != nil {
		if u.seeker == nil {
			return nil, errors.New("runner: artifacts reader cannot be rewound")
		}
		u.cur.stop()
		if _, err := u.seeker.Seek(u.start, io.SeekStart); err != nil {
			return nil, fmt.Errorf("runner: rewinding artifacts: %w", err)
		}
	}
	pr, pw := io.Pipe()
	u.cur = &pipeBody{pr: pr, pw: pw, src: u.src, name: u.name, boundary: u.boundary, done: make(chan struct{})}
	return u.cur, nil
}

// stop ends the current body's goroutine, if any.
func (u *upload) stop() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cur != nil {
		u.cur.stop()
	}
}

// pipeBody is a request body that writes the multipart form into a pipe
// from a goroutine started on the first Read, so a body that is never read
// starts nothing.
type pipeBody struct {
	pr             *io.PipeReader
	pw             *io.PipeWriter
	src            io.Reader
	name, boundary string
	once           sync.Once
	started        bool
	done           chan struct{}
}

var errBodyClosed = errors.New("runner: upload body closed")

func (p *pipeBody) Read(b []byte) (int, error) {
	p.once.Do(func() {
		p.started = true
		go p.write()
	})
	return p.pr.Read(b)
}

// Close makes the writing goroutine fail its next write and exit.
func (p *pipeBody) Close() error {
	_ = p.pr.CloseWithError(errBodyClosed)
	return nil
}

// stop closes the body and waits for its goroutine.
func (p *pipeBody) stop() {
	_ = p.Close()
	p.once.Do(func() {}) // a goroutine can no longer start
	if p.started {
		<-p.done
	}
}

func (p *pipeBody) write() {
	defer close(p.done)
	mw := multipart.NewWriter(p.pw)
	err := mw.SetBoundary(p.boundary)
	var part io.Writer
	if err == nil {
		part, err = mw.CreateFormFile("file", p.name)
	}
	if err == nil {
		_, err = io.Copy(part, p.src)
	}
	if err == nil {
		err = mw.Close()
	}
	_ = p.pw.CloseWithError(err)
}

func randomBoundary() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return "collab-" + hex.EncodeToString(b[:])
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
// Contract: GET /builds/:id/artifacts (runner)
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
// Contract: DELETE /builds/:id/artifacts (runner)
func (c *Client) DeleteArtifacts(ctx context.Context, id int, buildToken string) error {
	req, err := c.buildRequest(ctx, http.MethodDelete, fmt.Sprintf("builds/%d/artifacts", id), buildToken, nil)
	if err != nil {
		return err
	}
	_, err = c.c.Do(req, nil)
	return err
}
