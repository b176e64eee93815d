package runner

import (
	"context"
	"io"
	"net/http"
	"net/url"

	"github.com/collabsvc/collab"
)

// UploadArtifactsOptions are the optional parameters of UploadArtifacts.
type UploadArtifactsOptions struct {
	// ExpireIn is how long the server keeps the artifacts, such as
	// "7 days"; empty keeps the server's default. Sent in the query.
	ExpireIn string
}

// UploadArtifacts streams r to the server as the build's artifacts file,
// under the file name name ("artifacts.zip" when empty). The body is
// written through a pipe as it is sent, so r is never held in memory.
// It returns the build record the server answers with, whose Token is the
// build token (it redacts itself when printed). A 413 (the file exceeds the
// server's limit) matches collab.ErrRequestTooLarge; a 403 (a bad token, or
// the build is no longer running or was erased) collab.ErrForbidden.
//
// Retries are the client's RetryPolicy, as for every POST: the upload is
// sent again only on a 429 or when the connection was refused, and only
// when r is an io.ReadSeeker, which is rewound to where it stood. Any other
// reader is sent once. So one call sends at most the policy's attempts.
//
// UploadArtifacts returns only once its copying goroutine has ended, so r
// must not block forever in Read; a cancelled context stops the upload.
//
// API: POST /builds/:id/artifacts (runner)
func (c *Client) UploadArtifacts(ctx context.Context, id int, buildToken, name string, r io.Reader, opts *UploadArtifactsOptions) (*Build, error) {
	if r == nil {
		return nil, &collab.ArgumentError{Arg: "r", Reason: "is nil"}
	}
	if err := checkBuildToken(buildToken); err != nil {
		return nil, err
	}
	if name == "" {
		name = "artifacts.zip"
	}
	path, err := buildPath(id, "/artifacts")
	if err != nil {
		return nil, err
	}
	if opts != nil && opts.ExpireIn != "" {
		path += "?" + url.Values{"expire_in": {opts.ExpireIn}}.Encode()
	}
	req, finish, err := c.c.NewUploadRequest(ctx, path, "file", name, r)
	if err != nil {
		return nil, err
	}
	defer finish()
	req.Header.Set("BUILD-TOKEN", buildToken)
	return c.doBuild(req)
}

// DownloadArtifacts streams the build's artifacts file into w and returns
// the number of bytes written. A 404 (no artifacts) matches
// collab.ErrNotFound; a 403 (a bad token) collab.ErrForbidden. A redirect
// to storage on another host is followed without the build token.
//
// API: GET /builds/:id/artifacts (runner)
func (c *Client) DownloadArtifacts(ctx context.Context, id int, buildToken string, w io.Writer) (int64, error) {
	if w == nil {
		return 0, &collab.ArgumentError{Arg: "w", Reason: "is nil"}
	}
	req, err := c.buildRequest(ctx, http.MethodGet, id, "/artifacts", buildToken, nil)
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
	req, err := c.buildRequest(ctx, http.MethodDelete, id, "/artifacts", buildToken, nil)
	if err != nil {
		return err
	}
	_, err = c.c.Do(req, nil)
	return err
}
