// Package runner is a client of the Collaboration Service's runner API
// ({base}/ci/api/v1): the calls a build runner makes to take a build, report
// its state, stream its log and move its artifacts.
//
// It reuses the root package's request building, retries and errors: a
// runner.Client wraps a *collab.Client whose API path is ci/api/v1, so every
// failure is an *collab.ErrorResponse or *collab.RequestError and matches the
// collab sentinels (collab.ErrForbidden, collab.ErrRangeNotSatisfiable, ...).
//
// A runner loop:
//
//	rc, _ := runner.NewClient("https://collab.example.com")
//	b, err := rc.RequestBuild(ctx, runnerToken, &runner.Info{Name: "my-runner"})
//	if err != nil || b == nil { ... }           // b == nil: nothing to do
//	tw := rc.NewTraceWriter(ctx, b.ID, string(b.Token), runner.TraceWriterOptions{})
//	// run b.Commands with tw as stdout and stderr; stop when tw.Canceled() closes
//	err = tw.Close()
//	err = rc.UpdateBuild(ctx, b.ID, runnerToken, collab.BuildSuccess, nil)
//
// Retries and limits. The client's collab.RetryPolicy is the only retry
// layer: each call of this package sends at most the policy's attempts. As
// for every request of the root package, a 429 is retried for every method,
// a 5xx or a dropped connection only for GET, PUT and DELETE, and a body
// only when it can be rewound. The trace writer adds one rule of its own,
// the resync after a 416 (see TraceWriter). Build records are decoded under
// the client's response ceiling (collab.WithMaxResponseSize); artifacts and
// traces stream without it and are never held in memory.
//
// Ids. A build id below 1 is refused with a *collab.ArgumentError before
// any request is sent, as every id is in the root package.
//
// Secrets. The runner token travels in the form body of register and update
// calls; the build token in the BUILD-TOKEN header. Neither is ever put in a
// URL, an error or a log line, and neither follows a redirect to another
// origin: every error this package returns has both replaced by [redacted],
// as the root package's errors have. Token, RepoURL and Variable redact
// themselves the same way when printed with fmt or logged with slog, so a
// *Build can be logged whole.
package runner

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/wire"
)

// APIPath is the runner API's prefix under the service's base URL.
const APIPath = "ci/api/v1"

// Client talks to the runner API. It is safe for concurrent use.
type Client struct {
	c *collab.Client
}

// NewClient returns a runner API client for the service at baseURL (with or
// without a trailing /ci/api/v1). opts are the root package's options, such
// as collab.WithHTTPClient, collab.WithRetry or collab.WithLogger. The
// runner API authenticates with runner and build tokens passed to each call,
// so no PRIVATE-TOKEN is sent unless an option such as
// collab.WithPrivateToken asks for one.
//
// Redirects (artifacts may be served from storage elsewhere) are followed
// without the token headers once they leave the service's origin, with any
// http.Client; a redirect that would resend a request body (a 307 or 308 of
// a register, update, trace or upload call) to another origin is refused
// with an error matching collab.ErrUnsafeRedirect, and not retried.
func NewClient(baseURL string, opts ...collab.ClientOption) (*Client, error) {
	all := make([]collab.ClientOption, 0, len(opts)+1)
	all = append(all, opts...)
	all = append(all, collab.WithAPIPath(APIPath))
	c, err := collab.NewClient(baseURL, all...)
	if err != nil {
		return nil, err
	}
	return &Client{c: c}, nil
}

// FromClient returns a runner API client made from c: on the same server,
// through the same transport, with c's retry policy, observer and logger,
// and sharing c's rate and concurrency limits and the pauses the server
// asks for, so that a program's runner calls and API calls spend one budget.
// It sends c's token and Sudo user too, as c would.
func FromClient(c *collab.Client) (*Client, error) {
	if c == nil {
		return nil, &collab.ArgumentError{Arg: "c", Reason: "is nil"}
	}
	api, err := c.ForAPIPath(APIPath)
	if err != nil {
		return nil, err
	}
	return &Client{c: api}, nil
}

// API returns the underlying root-package client, for its BaseURL or to
// build requests this package does not cover.
func (c *Client) API() *collab.Client { return c.c }

// Info describes the runner to the server when it asks for a build.
type Info struct {
	Name         string
	Version      string
	Revision     string
	Platform     string
	Architecture string
}

type registerOptions struct {
	Token string `url:"token"`
	infoOptions
}

// RequestBuild asks for the oldest pending build. It returns (nil, nil) when
// there is nothing to do: 404 on servers of release 8.x, 204 on later ones,
// and a paused runner gets the same 404. A 403 (an unknown or removed runner
// token) matches collab.ErrForbidden: the runner is unhealthy and should stop
// asking.
//
// API: POST /builds/register (runner)
func (c *Client) RequestBuild(ctx context.Context, runnerToken string, info *Info) (*Build, error) {
	if runnerToken == "" {
		return nil, &collab.ArgumentError{Arg: "runnerToken", Reason: "is empty"}
	}
	opt := registerOptions{Token: runnerToken}
	if info != nil {
		opt.infoOptions = infoOptions(*info)
	}
	req, err := c.c.NewRequest(ctx, http.MethodPost, wire.Fixed("builds/register"), &opt)
	if err != nil {
		return nil, err
	}
	b, err := c.doBuild(req)
	if errors.Is(err, collab.ErrNotFound) || errors.Is(err, errNoBuild) {
		return nil, nil
	}
	return b, err
}

// redacted replaces a secret wherever this package shows one: the root
// package's marker, so that every error and log line reads the same.
const redacted = wire.Marker

// redactRepoURL shows a clone address with its user name but with the
// password and any credential parameter replaced by the marker, or only the
// marker when it does not parse.
func redactRepoURL(raw string) string {
	// A URL redacted already (read back from JSON) parses, and stays as it is.
	raw = strings.Replace(raw, ":"+redacted+"@", ":"+url.PathEscape(redacted)+"@", 1)
	p, err := url.Parse(raw)
	if err != nil {
		return redacted
	}
	user := p.User
	s := wire.RedactURL(p) // without user info
	if user == nil {
		return s
	}
	name := url.User(user.Username()).String()
	if _, ok := user.Password(); ok {
		name += ":" + redacted
	}
	if i := strings.Index(s, "//"); i >= 0 {
		return s[:i+2] + name + "@" + s[i+2:]
	}
	return s
}

// errNoBuild is a 204 answer where a build record was expected.
var errNoBuild = errors.New("server answered 204 No Content instead of a build")

// errNullBuild is a JSON null where a build record was expected.
var errNullBuild = errors.New("server answered null instead of a build")

// doBuild sends req and decodes the build record it answers with; an
// answer without one is a *collab.DecodeError, never a nil build. A build
// some of whose values did not fit comes back with the error, which wraps
// collab.FieldErrors, as the root package's calls return records.
func (c *Client) doBuild(req *http.Request) (*Build, error) {
	var b *Build
	resp, err := c.c.Do(req, &b)
	switch {
	case err != nil && partial(err) && b != nil:
		return b, err
	case err != nil:
		return nil, err
	case resp.StatusCode == http.StatusNoContent:
		err = errNoBuild
	case b == nil:
		err = errNullBuild
	default:
		return b, nil
	}
	return nil, decodeError(req, err)
}

// partial reports whether err comes with a record: some of its values did
// not fit their fields (see collab.FieldErrors).
func partial(err error) bool {
	var fe collab.FieldErrors
	return errors.As(err, &fe)
}

// decodeError reports an answer to req that is not what was expected, with
// every credential req carries hidden from its text.
func decodeError(req *http.Request, err error) error {
	return &collab.DecodeError{Method: req.Method, URL: wire.RedactURL(req.URL), Err: wire.Redacted(err, wire.RequestSecrets(req))}
}

// route builds a runner API path with the root package's route builder:
// each %s is one escaped path value, and an id below 1 or an empty value is
// a *collab.ArgumentError, before any request.
func route(format string, args ...any) (string, error) {
	wire.Template(format) // registered, so that the core names the request by it
	return wire.Route(argumentError, format, args...)
}

// argumentError is the error of a value the route builder refused.
func argumentError(arg, reason string) error { return &collab.ArgumentError{Arg: arg, Reason: reason} }

// buildPath is the path of one build's endpoint; a bad id is named "id",
// the argument of every method that takes one.
func buildPath(id int, suffix string) (string, error) {
	p, err := route("builds/%s"+suffix, id)
	var ae *collab.ArgumentError
	if errors.As(err, &ae) {
		ae.Arg = "id"
	}
	return p, err
}

type updateOptions struct {
	Token string             `url:"token"`
	State collab.BuildStatus `url:"state,omitempty"`
	Trace *string            `url:"trace,omitempty"`
}

// UpdateBuild reports a build's state (collab.BuildRunning, BuildSuccess,
// BuildFailed or BuildCanceled; "" to send only the trace) with the runner
// token. Any other state is an *collab.ArgumentError. A non-nil trace REPLACES the whole
// trace stored on the server, so do not mix it with appends from a
// TraceWriter unless trace is the complete log. A 404 means the build is no
// longer running or is not this runner's (for example it was canceled); a
// 403 that it was erased.
//
// API: PUT /builds/:id (runner)
func (c *Client) UpdateBuild(ctx context.Context, id int, runnerToken string, state collab.BuildStatus, trace *string) error {
	if runnerToken == "" {
		return &collab.ArgumentError{Arg: "runnerToken", Reason: "is empty"}
	}
	switch state {
	case "", collab.BuildRunning, collab.BuildSuccess, collab.BuildFailed, collab.BuildCanceled:
	default:
		return &collab.ArgumentError{Arg: "state", Reason: "must be running, success, failed, canceled or empty"} // the value is not echoed: it could be a secret passed by mistake
	}
	path, err := buildPath(id, "")
	if err != nil {
		return err
	}
	return c.putBuild(ctx, path, &updateOptions{Token: runnerToken, State: state, Trace: trace})
}

// putBuild sends a build update to path.
func (c *Client) putBuild(ctx context.Context, path string, opt *updateOptions) error {
	req, err := c.c.NewRequest(ctx, http.MethodPut, path, opt)
	if err != nil {
		return err
	}
	_, err = c.c.Do(req, nil)
	return err
}

// buildRequest builds a request to the endpoint of build id named by
// suffix, authenticated with the BUILD-TOKEN header.
func (c *Client) buildRequest(ctx context.Context, method string, id int, suffix, buildToken string, body any) (*http.Request, error) {
	if err := checkBuildToken(buildToken); err != nil {
		return nil, err
	}
	path, err := buildPath(id, suffix)
	if err != nil {
		return nil, err
	}
	req, err := c.c.NewRequest(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("BUILD-TOKEN", buildToken)
	return req, nil
}

// checkBuildToken refuses a token that cannot travel in a header.
func checkBuildToken(buildToken string) error {
	if buildToken == "" {
		return &collab.ArgumentError{Arg: "buildToken", Reason: "is empty"}
	}
	if strings.ContainsAny(buildToken, "\r\n") {
		return &collab.ArgumentError{Arg: "buildToken", Reason: "contains a line break"}
	}
	return nil
}
