package collab

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// BuildStatus is the status of a build, in records and webhook events, and
// of a pipeline. A status this package does not name, from a later server,
// decodes as itself.
type BuildStatus string

// Build statuses, as Build.Status reports them and as BuildScopes filters
// on. Builds that never ran because an earlier stage failed are skipped.
const (
	BuildPending  BuildStatus = "pending"
	BuildRunning  BuildStatus = "running"
	BuildSuccess  BuildStatus = "success"
	BuildFailed   BuildStatus = "failed"
	BuildCanceled BuildStatus = "canceled"
	BuildSkipped  BuildStatus = "skipped"
)

// Build is a CI build record.
//
// Deployed servers leave artifacts_file out when there are no artifacts, and
// the records returned by Erase and KeepArtifacts carry download_url in its
// place; both shapes decode here, with the missing field left nil.
type Build struct {
	ID            int            `json:"id"`
	Name          string         `json:"name"`
	Stage         string         `json:"stage"`
	Ref           string         `json:"ref"`
	Tag           bool           `json:"tag"`
	Status        BuildStatus    `json:"status"`
	Coverage      *float64       `json:"coverage"`
	CreatedAt     *Time          `json:"created_at"`
	StartedAt     *Time          `json:"started_at"`  // nil for a build that never ran
	FinishedAt    *Time          `json:"finished_at"` // nil until it finishes, and after a retry
	Runner        *BuildRunner   `json:"runner"`
	ArtifactsFile *ArtifactsFile `json:"artifacts_file"`
	DownloadURL   *string        `json:"download_url"`
	Commit        *BuildCommit   `json:"commit"`
	User          *BuildUser     `json:"user"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// BuildRunner is the runner that took a build.
type BuildRunner struct {
	ID          int     `json:"id"`
	Description *string `json:"description"` // null when the runner has none
	Active      bool    `json:"active"`
	IsShared    bool    `json:"is_shared"`
	Name        *string `json:"name"` // null until the runner reports it

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// ArtifactsFile describes a build's stored artifacts.
type ArtifactsFile struct {
	Filename string `json:"filename"`
	Size     int64  `json:"size"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// BuildCommit is the commit a build ran on.
type BuildCommit struct {
	ID          string `json:"id"`
	ShortID     string `json:"short_id"`
	Title       string `json:"title"`
	Message     string `json:"message"`
	AuthorName  string `json:"author_name"`
	AuthorEmail string `json:"author_email"`
	CreatedAt   *Time  `json:"created_at"`

	// Extra holds the keys this package does not know, verbatim.
	Extra map[string]json.RawMessage `json:"-"`
}

// BuildScopes filters build lists by status, for example
// BuildScopes{BuildFailed, BuildCanceled}. It encodes one value as
// scope=pending and several as scope[0]=pending&scope[1]=running: the
// server rejects the form scope[]= with 400. Values are checked before any
// request is sent.
type BuildScopes []BuildStatus

// Validate reports the first value that is not a build status, as an
// *ArgumentError.
func (s BuildScopes) Validate() error {
	for i, v := range s {
		switch v {
		case BuildPending, BuildRunning, BuildSuccess, BuildFailed, BuildCanceled, BuildSkipped:
		default:
			return invalidArg(fmt.Sprintf("opt.Scope[%d]", i), "is %q, not pending, running, success, failed, canceled or skipped", v)
		}
	}
	return nil
}

// EncodeValues implements query.Encoder.
func (s BuildScopes) EncodeValues(key string, v *url.Values) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if len(s) == 1 {
		v.Set(key, string(s[0]))
		return nil
	}
	for i, scope := range s {
		v.Set(key+"["+strconv.Itoa(i)+"]", string(scope))
	}
	return nil
}

// ListBuildsOptions filters BuildsService.List. Builds come newest first.
type ListBuildsOptions struct {
	ListOptions
	Scope BuildScopes `url:"scope,omitempty"` // empty means every status
}

// ListBuildsForCommitOptions filters BuildsService.ListForCommit.
type ListBuildsForCommitOptions struct {
	ListOptions
	Scope BuildScopes `url:"scope,omitempty"` // empty means every status
}

// BuildsService handles the build endpoints of the consumer API. The runner
// package has the endpoints a runner uses to take and report builds.
type BuildsService struct{ client *Client }

// List returns one page of a project's builds, newest first. An unknown
// scope is an *ArgumentError.
//
// API: GET /projects/:id/builds
func (s *BuildsService) List(ctx context.Context, pid any, opt *ListBuildsOptions) ([]*Build, *Response, error) {
	if opt != nil {
		if err := opt.Scope.Validate(); err != nil {
			return nil, nil, err
		}
	}
	return doList[Build](ctx, s.client, http.MethodGet, route("projects/%s/builds", pid), opt)
}

// All iterates over the builds of every page of List, newest first. An
// unknown scope is an *ArgumentError, yielded before any request.
//
// API: GET /projects/:id/builds
func (s *BuildsService) All(ctx context.Context, pid any, opt *ListBuildsOptions, iopts ...IterOption) iter.Seq2[*Build, error] {
	return all[Build](ctx, s.client, route("projects/%s/builds", pid), opt, iopts)
}

// ListForCommit returns one page of the builds that ran on commit sha. An
// empty sha or an unknown scope is an *ArgumentError.
//
// API: GET /projects/:id/repository/commits/:sha/builds
func (s *BuildsService) ListForCommit(ctx context.Context, pid any, sha string, opt *ListBuildsForCommitOptions) ([]*Build, *Response, error) {
	if opt != nil {
		if err := opt.Scope.Validate(); err != nil {
			return nil, nil, err
		}
	}
	return doList[Build](ctx, s.client, http.MethodGet, commitBuildsPath(pid, sha), opt)
}

// AllForCommit iterates over the builds of every page of ListForCommit. An
// unknown scope is an *ArgumentError, yielded before any request.
//
// API: GET /projects/:id/repository/commits/:sha/builds
func (s *BuildsService) AllForCommit(ctx context.Context, pid any, sha string, opt *ListBuildsForCommitOptions, iopts ...IterOption) iter.Seq2[*Build, error] {
	return all[Build](ctx, s.client, commitBuildsPath(pid, sha), opt, iopts)
}

// commitBuildsPath refuses an empty sha by its own argument name.
func commitBuildsPath(pid any, sha string) endpoint {
	if sha == "" {
		return endpoint{err: errRequired("sha")}
	}
	return route("projects/%s/repository/commits/%s/builds", pid, sha)
}

// Get returns one build.
//
// API: GET /projects/:id/builds/:build_id
func (s *BuildsService) Get(ctx context.Context, pid any, buildID int) (*Build, *Response, error) {
	return do[Build](ctx, s.client, http.MethodGet, route("projects/%s/builds/%s", pid, buildID), nil)
}

// Download is a file streaming from the server. It reads the response body
// directly, so nothing is held in memory; the caller must Close it.
type Download struct {
	io.ReadCloser

	// Filename is the name from Content-Disposition, reduced to its last path
	// element so that it is safe to join to a directory; "" when absent.
	Filename string
	// Size is the length in bytes, or -1 when the server did not say.
	Size int64
	// ContentType is the media type the server sent.
	ContentType string
}

// Artifacts streams a build's artifacts file into w. It fails with
// ErrNotFound when the build has no artifacts, and a nil w is an
// *ArgumentError. A redirect to storage on
// another host is followed without the client's credentials.
//
// API: GET /projects/:id/builds/:build_id/artifacts
func (s *BuildsService) Artifacts(ctx context.Context, pid any, buildID int, w io.Writer) (*Response, error) {
	return s.client.downloadTo(ctx, route("projects/%s/builds/%s/artifacts", pid, buildID), w)
}

// OpenArtifacts starts downloading a build's artifacts file and returns it
// open, with its file name and size, for the caller to read and Close. It
// fails with ErrNotFound when the build has no artifacts. A redirect to
// storage on another host is followed without the client's credentials.
//
// API: GET /projects/:id/builds/:build_id/artifacts
func (s *BuildsService) OpenArtifacts(ctx context.Context, pid any, buildID int) (*Download, *Response, error) {
	return s.client.open(ctx, route("projects/%s/builds/%s/artifacts", pid, buildID))
}

// Trace streams a build's log into w. It fails with ErrNotFound when the
// build has no trace, and a nil w is an *ArgumentError.
//
// API: GET /projects/:id/builds/:build_id/trace
func (s *BuildsService) Trace(ctx context.Context, pid any, buildID int, w io.Writer) (*Response, error) {
	return s.client.downloadTo(ctx, route("projects/%s/builds/%s/trace", pid, buildID), w)
}

// OpenTrace starts downloading a build's log (named "<id>.log") and returns
// it open for the caller to read and Close.
//
// API: GET /projects/:id/builds/:build_id/trace
func (s *BuildsService) OpenTrace(ctx context.Context, pid any, buildID int) (*Download, *Response, error) {
	return s.client.open(ctx, route("projects/%s/builds/%s/trace", pid, buildID))
}

// Cancel stops a pending or running build and returns it canceled.
//
// API: POST /projects/:id/builds/:build_id/cancel
func (s *BuildsService) Cancel(ctx context.Context, pid any, buildID int) (*Build, *Response, error) {
	return do[Build](ctx, s.client, http.MethodPost, route("projects/%s/builds/%s/cancel", pid, buildID), nil)
}

// Retry starts a finished build again. It returns the NEW build, which has
// its own id and status pending; the old build keeps its record.
//
// API: POST /projects/:id/builds/:build_id/retry
func (s *BuildsService) Retry(ctx context.Context, pid any, buildID int) (*Build, *Response, error) {
	return do[Build](ctx, s.client, http.MethodPost, route("projects/%s/builds/%s/retry", pid, buildID), nil)
}

// Erase removes a finished build's artifacts and trace and returns the build.
//
// API: POST /projects/:id/builds/:build_id/erase
func (s *BuildsService) Erase(ctx context.Context, pid any, buildID int) (*Build, *Response, error) {
	return do[Build](ctx, s.client, http.MethodPost, route("projects/%s/builds/%s/erase", pid, buildID), nil)
}

// KeepArtifacts clears the expiry of a build's artifacts so that they are
// never deleted, and returns the build.
//
// API: POST /projects/:id/builds/:build_id/artifacts/keep
func (s *BuildsService) KeepArtifacts(ctx context.Context, pid any, buildID int) (*Build, *Response, error) {
	return do[Build](ctx, s.client, http.MethodPost, route("projects/%s/builds/%s/artifacts/keep", pid, buildID), nil)
}

// downloadTo copies a download into w as it arrives.
func (c *Client) downloadTo(ctx context.Context, p endpoint, w io.Writer) (*Response, error) {
	if w == nil {
		return nil, errRequired("w")
	}
	req, err := c.downloadRequest(ctx, p)
	if err != nil {
		return nil, err
	}
	return c.Do(req, w)
}

// open starts a download and hands its body to the caller.
func (c *Client) open(ctx context.Context, p endpoint) (*Download, *Response, error) {
	req, err := c.downloadRequest(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.BareDo(req)
	if err != nil {
		return nil, resp, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return &Download{
		ReadCloser:  resp.Body,
		Filename:    dispositionFilename(resp.Header.Get("Content-Disposition")),
		Size:        resp.ContentLength,
		ContentType: ct,
	}, resp, nil
}

func (c *Client) downloadRequest(ctx context.Context, p endpoint) (*http.Request, error) {
	if p.err != nil {
		return nil, p.err
	}
	req, err := c.NewRequest(ctx, http.MethodGet, p.s, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "*/*") // the body is a file; errors still come as JSON
	return req, nil
}

// dispositionFilename reads the file name of a Content-Disposition header:
// quoted or not (the server sends artifacts names unquoted, even with
// spaces), or RFC 5987 filename*. Directory parts are dropped.
func dispositionFilename(h string) string {
	if h == "" {
		return ""
	}
	var name string
	if _, params, err := mime.ParseMediaType(h); err == nil {
		name = params["filename"]
	} else if _, rest, ok := strings.Cut(h, "filename="); ok {
		// An unquoted name with spaces or other non-token characters.
		name, _, _ = strings.Cut(rest, ";")
		name = strings.TrimSpace(name)
		if uq, err := strconv.Unquote(name); err == nil {
			name = uq
		}
	}
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	if name == "." || name == "/" || name == ".." {
		return ""
	}
	return name
}
