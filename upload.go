package collab

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"sync"
)

// NewUploadRequest builds a POST to path whose body streams r as the
// multipart field named field, with the given file name, without holding the
// file in memory. When r is an io.ReadSeeker the request's GetBody rewinds r
// to where it stood and streams it again, so the request may be retried;
// otherwise it is sent once. Call finish after Do or BareDo returns: it
// stops and waits for the goroutine that copies r.
func (c *Client) NewUploadRequest(ctx context.Context, path, field, filename string, r io.Reader) (req *http.Request, finish func(), err error) {
	switch {
	case r == nil:
		return nil, nil, invalidArg("r", "is nil")
	case field == "":
		return nil, nil, errRequired("field")
	case filename == "":
		return nil, nil, errRequired("filename")
	}
	up := newMultipartUpload(field, filename, r)
	body, err := up.body()
	if err != nil {
		return nil, nil, err
	}
	req, err = c.NewRequest(ctx, http.MethodPost, path, body)
	if err != nil {
		up.stop()
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "multipart/form-data; boundary="+up.boundary)
	if up.seeker != nil {
		req.GetBody = func() (io.ReadCloser, error) { return up.body() }
	}
	return req, up.stop, nil
}

// multipartUpload produces multipart bodies for one file. Each body runs its
// own copying goroutine; a new body (for a retry) first stops the previous
// one and rewinds the source to where it stood.
type multipartUpload struct {
	field, name, boundary string
	src                   io.Reader
	seeker                io.ReadSeeker // non-nil when src can be rewound
	start                 int64

	mu  sync.Mutex
	cur *pipeBody
}

func newMultipartUpload(field, name string, src io.Reader) *multipartUpload {
	var b [24]byte
	_, _ = rand.Read(b[:])
	u := &multipartUpload{field: field, name: name, src: src, boundary: "collab-" + hex.EncodeToString(b[:])}
	if s, ok := src.(io.ReadSeeker); ok {
		if pos, err := s.Seek(0, io.SeekCurrent); err == nil {
			u.seeker, u.start = s, pos
		}
	}
	return u
}

var errNotRewindable = errors.New("collab: the upload's reader cannot be rewound")

func (u *multipartUpload) body() (*pipeBody, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cur != nil {
		if u.seeker == nil {
			return nil, errNotRewindable
		}
		u.cur.stop()
		if _, err := u.seeker.Seek(u.start, io.SeekStart); err != nil {
			return nil, fmt.Errorf("collab: rewinding the upload: %w", err)
		}
	}
	pr, pw := io.Pipe()
	u.cur = &pipeBody{pr: pr, pw: pw, up: u, done: make(chan struct{})}
	return u.cur, nil
}

// stop ends the current body's goroutine, if any.
func (u *multipartUpload) stop() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cur != nil {
		u.cur.stop()
	}
}

// pipeBody is a request body that writes the multipart form into a pipe
// from a goroutine started on the first Read, so a body never read starts
// nothing.
type pipeBody struct {
	pr      *io.PipeReader
	pw      *io.PipeWriter
	up      *multipartUpload
	once    sync.Once
	started bool
	done    chan struct{}
}

var errBodyClosed = errors.New("collab: upload body closed")

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
	err := mw.SetBoundary(p.up.boundary)
	var part io.Writer
	if err == nil {
		part, err = mw.CreateFormFile(p.up.field, p.up.name)
	}
	if err == nil {
		_, err = io.Copy(part, p.up.src)
	}
	if err == nil {
		err = mw.Close()
	}
	_ = p.pw.CloseWithError(err)
}
