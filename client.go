package collab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/collabsvc/collab/internal/secretwatch"
	"github.com/google/go-querystring/query"
	"github.com/hashicorp/go-retryablehttp"
)

// Version is the SDK version sent in the default User-Agent.
const Version = "0.1.0"

const (
	defaultUserAgent = "collab-go/" + Version
	apiV3Path        = "api/v3"
	runnerAPIPath    = "ci/api/v1"
)

// Client talks to one Collaboration Service. It is safe for concurrent use.
type Client struct {
	baseURL   *url.URL // ends in "/", e.g. https://host/api/v3/
	base      string   // baseURL as a string, built once
	http      *retryablehttp.Client
	logger    *slog.Logger
	userAgent string
	authKey   string // header name for the token
	authValue string // header value, never logged
	sudo      string
	jobQueue  string

	// Services, one per resource group of the contract.
	Projects       *ProjectsService
	Groups         *GroupsService
	ProjectMembers *ProjectMembersService
	GroupMembers   *GroupMembersService
	Hooks          *HooksService
	Branches       *BranchesService
	Settings       *SettingsService
	JobQueue       *JobQueueService
	Issues         *IssuesService
	MergeRequests  *MergeRequestsService
	Labels         *LabelsService
	AwardEmoji     *AwardEmojiService
	Notes          *NotesService
	Milestones     *MilestonesService
	Builds         *BuildsService
}

// ClientOption configures a Client in NewClient.
type ClientOption func(*clientConfig) error

type clientConfig struct {
	httpClient *http.Client
	logger     *slog.Logger
	userAgent  string
	authKey    string
	authValue  string
	apiPath    string
	jobQueue   string
	retry      RetryPolicy
}

// RetryPolicy sets how failed requests are retried. See WithRetry.
type RetryPolicy struct {
	MaxRetries int           // retries after the first attempt; 0 disables retries
	MinWait    time.Duration // first backoff step
	MaxWait    time.Duration // cap on any single wait, Retry-After included
}

// DefaultRetryPolicy is used unless WithRetry or WithoutRetries is given.
var DefaultRetryPolicy = RetryPolicy{MaxRetries: 3, MinWait: 500 * time.Millisecond, MaxWait: 30 * time.Second}

// WithPrivateToken authenticates with a private token (header PRIVATE-TOKEN).
func WithPrivateToken(token string) ClientOption { return withAuth("PRIVATE-TOKEN", token) }

// WithPersonalAccessToken authenticates with a personal access token (header PRIVATE-TOKEN).
func WithPersonalAccessToken(token string) ClientOption { return withAuth("PRIVATE-TOKEN", token) }

// WithOAuthToken authenticates with an OAuth 2 token (header Authorization: Bearer).
func WithOAuthToken(token string) ClientOption { return withAuth("Authorization", "Bearer "+token) }

func withAuth(key, value string) ClientOption {
	return func(c *clientConfig) error {
		if strings.ContainsAny(value, "\r\n") {
			return errors.New("collab: token contains a line break")
		}
		c.authKey, c.authValue = key, value
		return nil
	}
}

// WithHTTPClient sends requests through hc, for its transport, proxy or TLS settings.
// Its Timeout, if any, applies to each attempt.
func WithHTTPClient(hc *http.Client) ClientOption {
	return func(c *clientConfig) error {
		if hc == nil {
			return errors.New("collab: nil *http.Client")
		}
		c.httpClient = hc
		return nil
	}
}

// WithUserAgent replaces the default User-Agent, collab-go/<Version>.
func WithUserAgent(ua string) ClientOption {
	return func(c *clientConfig) error { c.userAgent = ua; return nil }
}

// WithLogger logs each attempt and retry decision at debug level. Tokens are never logged.
func WithLogger(l *slog.Logger) ClientOption {
	return func(c *clientConfig) error { c.logger = l; return nil }
}

// WithRetry replaces DefaultRetryPolicy.
func WithRetry(p RetryPolicy) ClientOption {
	return func(c *clientConfig) error {
		if p.MaxRetries < 0 || p.MinWait < 0 || p.MaxWait < p.MinWait {
			return fmt.Errorf("collab: invalid retry policy %+v", p)
		}
		c.retry = p
		return nil
	}
}

// WithoutRetries sends every request exactly once.
func WithoutRetries() ClientOption { return WithRetry(RetryPolicy{}) }

// WithJobQueuePath sets the first path segment of the job-queue metrics endpoints.
// The contract calls it "jobqueue"; deployed servers use "sidekiq".
func WithJobQueuePath(segment string) ClientOption {
	return func(c *clientConfig) error {
		if segment == "" || strings.ContainsAny(segment, "/?#%") {
			return fmt.Errorf("collab: invalid job-queue path segment %q", segment)
		}
		c.jobQueue = segment
		return nil
	}
}

// WithAPIPath sets the API prefix appended to the base URL. The default is
// "api/v3"; the runner package uses "ci/api/v1".
func WithAPIPath(p string) ClientOption {
	return func(c *clientConfig) error { c.apiPath = strings.Trim(p, "/"); return nil }
}

// NewClient returns a client for the service at baseURL, which may be given
// with or without a trailing slash and with or without the API prefix.
func NewClient(baseURL string, opts ...ClientOption) (*Client, error) {
	cfg := clientConfig{userAgent: defaultUserAgent, apiPath: apiV3Path, jobQueue: "jobqueue", retry: DefaultRetryPolicy}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	base, err := parseBaseURL(baseURL, cfg.apiPath)
	if err != nil {
		return nil, err
	}
	hc := &http.Client{Transport: defaultTransport()}
	if cfg.httpClient != nil {
		cp := *cfg.httpClient // never change the caller's client
		hc = &cp
	}
	c := &Client{
		baseURL:   base,
		base:      base.String(),
		logger:    cfg.logger,
		userAgent: cfg.userAgent,
		authKey:   cfg.authKey,
		authValue: cfg.authValue,
		jobQueue:  cfg.jobQueue,
	}
	hc.CheckRedirect = c.safeRedirects(hc.CheckRedirect)
	c.http = newRetryClient(hc, cfg.retry, c.logger)
	c.initServices()
	return c, nil
}

// credentialHeaders are removed from a request redirected off the client's
// origin. net/http itself drops only Authorization and Cookie, and only for
// another domain; it would copy PRIVATE-TOKEN and SUDO to any host, and
// downloads may redirect to storage elsewhere.
var credentialHeaders = []string{"PRIVATE-TOKEN", "Authorization", "SUDO", "BUILD-TOKEN", "Cookie"}

// safeRedirects wraps a redirect policy (nil means net/http's default of at
// most 10 redirects) so that no credential leaves the client's origin.
func (c *Client) safeRedirects(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if !c.sameOrigin(req.URL) {
			for _, h := range credentialHeaders {
				req.Header.Del(h)
			}
		}
		var err error
		switch {
		case next != nil:
			err = next(req, via)
		case len(via) >= 10:
			err = fmt.Errorf("collab: stopped after %d redirects", len(via))
		}
		if err != nil && err != http.ErrUseLastResponse {
			err = &redirectError{err}
		}
		return err
	}
}

// redirectError is a refusal of the redirect policy; retrying cannot help.
type redirectError struct{ err error }

func (e *redirectError) Error() string { return e.err.Error() }
func (e *redirectError) Unwrap() error { return e.err }

func defaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 32 // prefetching iterators and bots run calls in parallel
	return t
}

func parseBaseURL(raw, apiPath string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("collab: invalid base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("collab: base URL must be absolute http(s), got %q", redactURL(u))
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("collab: base URL must not carry credentials, a query or a fragment")
	}
	p := strings.TrimRight(u.Path, "/")
	for _, known := range []string{"/" + apiV3Path, "/" + runnerAPIPath} {
		p = strings.TrimSuffix(p, known)
	}
	u.Path = p + "/" + apiPath + "/"
	u.RawPath = ""
	return u, nil
}

func (c *Client) initServices() {
	c.Projects = &ProjectsService{client: c}
	c.Groups = &GroupsService{client: c}
	c.ProjectMembers = &ProjectMembersService{client: c}
	c.GroupMembers = &GroupMembersService{client: c}
	c.Hooks = &HooksService{client: c}
	c.Branches = &BranchesService{client: c}
	c.Settings = &SettingsService{client: c}
	c.JobQueue = &JobQueueService{client: c}
	c.Issues = &IssuesService{client: c}
	c.MergeRequests = &MergeRequestsService{client: c}
	c.Labels = &LabelsService{client: c}
	c.AwardEmoji = &AwardEmojiService{client: c}
	c.Notes = &NotesService{client: c}
	c.Milestones = &MilestonesService{client: c}
	c.Builds = &BuildsService{client: c}
}

// BaseURL returns the API root every request path is resolved against.
func (c *Client) BaseURL() *url.URL {
	u := *c.baseURL
	return &u
}

// Sudo returns a copy of c whose requests act as user (an id or a username),
// through the SUDO header. The token must belong to an administrator.
func (c *Client) Sudo(user string) *Client {
	cp := *c
	cp.sudo = user
	cp.initServices()
	return &cp
}

// NewRequest builds a request for path, which is relative to the API root
// (for example "projects/1/issues") and must already be escaped. opt is
// encoded with go-querystring: into the query for GET, HEAD and DELETE, and
// into a form body for other methods. An opt that is an io.Reader is sent as
// the raw body instead. Authentication, Sudo and User-Agent headers are set.
func (c *Client) NewRequest(ctx context.Context, method, path string, opt any) (*http.Request, error) {
	if ctx == nil {
		return nil, errors.New("collab: nil context")
	}
	u, err := c.resolve(path)
	if err != nil {
		return nil, err
	}
	var body io.Reader
	var contentType string
	switch v := opt.(type) {
	case nil:
	case io.Reader:
		body = v
	default:
		values, err := query.Values(opt)
		if err != nil {
			return nil, fmt.Errorf("collab: encoding options: %w", err)
		}
		if len(values) == 0 {
			break
		}
		switch method {
		case http.MethodGet, http.MethodHead, http.MethodDelete:
			if u.RawQuery != "" {
				q := u.Query()
				for k, vs := range values {
					q[k] = vs
				}
				values = q
			}
			u.RawQuery = values.Encode()
		default:
			body = strings.NewReader(values.Encode())
			contentType = "application/x-www-form-urlencoded"
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("collab: building request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.authKey != "" {
		req.Header.Set(c.authKey, c.authValue)
	}
	if c.sudo != "" {
		req.Header.Set("SUDO", c.sudo)
	}
	return req, nil
}

// resolve turns an escaped relative path, or an absolute URL on the client's
// own origin, into a request URL.
func (c *Client) resolve(path string) (*url.URL, error) {
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		u, err := url.Parse(path)
		if err != nil {
			return nil, fmt.Errorf("collab: invalid URL: %w", err)
		}
		if !c.sameOrigin(u) {
			return nil, fmt.Errorf("collab: refusing to send credentials to %s://%s", u.Scheme, u.Host)
		}
		return u, nil
	}
	u, err := url.Parse(c.base + strings.TrimPrefix(path, "/"))
	if err != nil {
		return nil, fmt.Errorf("collab: invalid path: %w", err)
	}
	return u, nil
}

func (c *Client) sameOrigin(u *url.URL) bool {
	return u.Scheme == c.baseURL.Scheme && strings.EqualFold(u.Host, c.baseURL.Host)
}

// Do sends req, retrying as the RetryPolicy allows, and decodes a 2xx body into v:
// JSON for most values, or a raw copy when v is an io.Writer. Any other status
// becomes an *ErrorResponse. v may be nil.
func (c *Client) Do(req *http.Request, v any) (*Response, error) {
	resp, err := c.BareDo(req)
	if err != nil {
		return resp, err
	}
	defer closeBody(resp.Body)
	return resp, secretwatch.Error(c.decode(req, resp, v))
}

func (c *Client) decode(req *http.Request, resp *Response, v any) error {
	if v == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if w, ok := v.(io.Writer); ok {
		if _, err := io.Copy(w, resp.Body); err != nil {
			return c.transportError(req, err)
		}
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			err = errEmptyBody
		}
		return &DecodeError{Method: req.Method, URL: redactURL(req.URL), Err: err}
	}
	return nil
}

// BareDo sends req like Do but leaves the body of a 2xx response open for the
// caller to read and close. It is the way to stream large downloads.
func (c *Client) BareDo(req *http.Request) (*Response, error) {
	resp, err := c.bareDo(req)
	return resp, secretwatch.Error(err)
}

func (c *Client) bareDo(req *http.Request) (*Response, error) {
	if req == nil {
		return nil, errors.New("collab: nil request")
	}
	info := &attempt{method: req.Method, url: req.URL, rewindable: req.Body == nil || req.Body == http.NoBody || req.GetBody != nil}
	req = req.WithContext(context.WithValue(req.Context(), attemptKey{}, info))
	hresp, err := c.http.Do(&retryablehttp.Request{Request: req})
	if err != nil {
		if hresp != nil {
			closeBody(hresp.Body)
		}
		return nil, c.transportError(req, err)
	}
	resp := newResponse(hresp)
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		defer closeBody(hresp.Body)
		return resp, newErrorResponse(hresp, req.Method, req.URL)
	}
	return resp, nil
}

func (c *Client) transportError(req *http.Request, err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return &RequestError{Method: req.Method, URL: redactURL(req.URL), Err: err}
}

// closeBody drains a little of what is left so the connection can be reused.
func closeBody(b io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, b, 4<<10)
	_ = b.Close()
}

// apiPath is an escaped request path, or the error met while building it, so
// that a method can hand route's result straight to do.
type apiPath struct {
	s   string
	err error
}

// route fills each %s in format with one escaped path segment. Values may be
// int, int64 or string (an id or a "namespace/name" path); any other type,
// or an empty string, is an error.
func route(format string, args ...any) apiPath {
	segs := make([]any, len(args))
	for i, a := range args {
		s, err := pathSegment(a)
		if err != nil {
			return apiPath{err: err}
		}
		segs[i] = s
	}
	return apiPath{s: fmt.Sprintf(format, segs...)}
}

// pathSegment escapes one path value so that it can never change the
// endpoint: "/" becomes %2F and "." becomes %2E (the server reads a trailing
// ".json" as a format suffix).
func pathSegment(v any) (string, error) {
	switch t := v.(type) {
	case int:
		return strconv.Itoa(t), nil
	case int64:
		return strconv.FormatInt(t, 10), nil
	case string:
		if t == "" {
			return "", invalidArg("path value", "is empty")
		}
		return strings.ReplaceAll(url.PathEscape(t), ".", "%2E"), nil
	default:
		return "", invalidArg("path value", "must be an integer id or a string path, got %T", v)
	}
}

// do sends one request and decodes the record it returns. A JSON null where
// a record was expected is an error, never a nil result.
func do[T any](ctx context.Context, c *Client, method string, p apiPath, opt any) (*T, *Response, error) {
	var v *T
	resp, err := send(ctx, c, method, p, opt, &v)
	if err != nil {
		return nil, resp, err
	}
	if v == nil {
		return nil, resp, secretwatch.Error(&DecodeError{Method: method, URL: redactURL(resp.Request.URL), Err: errUnexpectedNullResult})
	}
	return v, resp, nil
}

// doList sends one request and decodes the array it returns.
func doList[T any](ctx context.Context, c *Client, method string, p apiPath, opt any) ([]*T, *Response, error) {
	var v []*T
	resp, err := send(ctx, c, method, p, opt, &v)
	return v, resp, err
}

// send builds, sends and decodes into v (which may be nil to discard the body).
func send(ctx context.Context, c *Client, method string, p apiPath, opt, v any) (*Response, error) {
	if p.err != nil {
		return nil, p.err
	}
	req, err := c.NewRequest(ctx, method, p.s, opt)
	if err != nil {
		return nil, err
	}
	return c.Do(req, v)
}

// errRequired reports a required parameter missing before any request is sent.
func errRequired(what string) error { return invalidArg(what, "is required") }

// encodeInto merges the go-querystring encoding of opt into v.
func encodeInto(v *url.Values, opt any) error {
	vals, err := query.Values(opt)
	if err != nil {
		return err
	}
	for k, vs := range vals {
		(*v)[k] = vs
	}
	return nil
}
