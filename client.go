package collab

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/collabsvc/collab/internal/jsonkeep"
	"github.com/collabsvc/collab/internal/wire"
	"github.com/google/go-querystring/query"
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
	baseURL   *url.URL     // ends in "/", e.g. https://host/api/v3/
	base      string       // baseURL as a string, built once
	http      *http.Client // the caller's client, or one on own
	attempt   *http.Client // http, through keepIdleConns: what go-retryablehttp sends each attempt with
	retry     RetryPolicy
	gov       *governor // limits and pauses, shared with every copy of the client
	observer  Observer
	logger    *slog.Logger
	userAgent string
	authKey   string // header name for the token
	authValue string // header value, never logged
	sudo      string
	jobQueue  string
	maxBody   int64           // largest JSON body decoded, after decompression
	learned   *learnedSecrets // credentials the API handed out, shared by copies
	own       *http.Transport // the transport NewClient made, which Close closes; nil when the caller gave the client

	// Services, one per resource group of the API.
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
	Users          *UsersService
}

// ClientOption configures a Client in NewClient.
type ClientOption func(*clientConfig) error

type clientConfig struct {
	httpClient *http.Client
	logger     *slog.Logger
	userAgent  string
	authKey    string
	authValue  string
	apiPrefix  string
	jobQueue   string
	retry      RetryPolicy
	maxBody    int64
	observer   Observer

	rate        float64 // requests per second, 0 for no limit
	burst       int
	concurrency int // requests in flight, 0 for no limit
	shared      SharedLimiter
}

// DefaultMaxResponseSize is the largest JSON body a client decodes unless
// WithMaxResponseSize says otherwise: 32 MiB, far above any page of 100
// records or any single record this API returns.
const DefaultMaxResponseSize int64 = 32 << 20

// WithMaxResponseSize sets the largest JSON response body, in bytes, that
// the client reads and decodes, counted after any gzip decompression. A
// larger body ends the call with an error matching ErrResponseTooLarge. Bodies
// streamed to a caller's io.Writer (artifacts, traces) are not limited by it.
func WithMaxResponseSize(n int64) ClientOption {
	return option(func(c *clientConfig) { c.maxBody = n }, n <= 0, "WithMaxResponseSize", "must be positive, got %d", n)
}

// RetryPolicy sets how failed requests are retried. See WithRetry.
type RetryPolicy struct {
	MaxRetries int           // retries after the first attempt; 0 disables retries
	MinWait    time.Duration // first backoff step
	MaxWait    time.Duration // cap on any single wait, Retry-After included
}

// DefaultRetryPolicy returns the policy a client uses unless WithRetry or
// WithoutRetries is given: 3 retries, waits from 500 ms doubling with
// jitter, at most 30 s each. It is a function so that no program can change
// the default of every client in the process.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: 3, MinWait: 500 * time.Millisecond, MaxWait: 30 * time.Second}
}

// WithPrivateToken authenticates with a private token (header PRIVATE-TOKEN).
func WithPrivateToken(token string) ClientOption { return withAuth("PRIVATE-TOKEN", token) }

// WithPersonalAccessToken authenticates with a personal access token (header PRIVATE-TOKEN).
func WithPersonalAccessToken(token string) ClientOption { return withAuth("PRIVATE-TOKEN", token) }

// WithOAuthToken authenticates with an OAuth 2 token (header Authorization: Bearer).
func WithOAuthToken(token string) ClientOption { return withAuth("Authorization", "Bearer "+token) }

func withAuth(key, value string) ClientOption {
	return option(func(c *clientConfig) { c.authKey, c.authValue = key, value }, strings.ContainsAny(value, "\r\n"), "token", "contains a line break")
}

// option makes a ClientOption that applies set or, when bad, fails NewClient
// with an *ArgumentError naming the option: arg, and the reason format and a
// say why.
func option(set func(*clientConfig), bad bool, arg, format string, a ...any) ClientOption {
	return func(c *clientConfig) error {
		if bad {
			return invalidArg(arg, format, a...)
		}
		set(c)
		return nil
	}
}

// WithHTTPClient sends requests through hc, for its transport, proxy or TLS settings.
// Its Timeout, if any, applies to each attempt.
func WithHTTPClient(hc *http.Client) ClientOption {
	return option(func(c *clientConfig) { c.httpClient = hc }, hc == nil, "WithHTTPClient", "is nil")
}

// WithUserAgent replaces the default User-Agent, collab-go/<Version>.
func WithUserAgent(ua string) ClientOption {
	return func(c *clientConfig) error { c.userAgent = ua; return nil }
}

// WithLogger logs each attempt and retry decision at debug level. Tokens are never logged.
func WithLogger(l *slog.Logger) ClientOption {
	return func(c *clientConfig) error { c.logger = l; return nil }
}

// WithObserver reports every call to o: its start, each wait for a limit
// and each retry, and its end. o sees route templates, statuses and
// durations, never a token, a query value or a body.
func WithObserver(o Observer) ClientOption {
	return option(func(c *clientConfig) { c.observer = o }, o == nil, "WithObserver", "is nil")
}

// WithRetry replaces DefaultRetryPolicy().
func WithRetry(p RetryPolicy) ClientOption {
	bad := p.MaxRetries < 0 || p.MinWait < 0 || p.MaxWait < p.MinWait
	return option(func(c *clientConfig) { c.retry = p }, bad, "WithRetry", "negative retries or waits, or MaxWait below MinWait: %+v", p)
}

// WithoutRetries sends every request exactly once.
func WithoutRetries() ClientOption { return WithRetry(RetryPolicy{}) }

// WithJobQueuePath sets the first path segment of the job-queue metrics endpoints.
// The API documents "jobqueue"; deployed servers use "sidekiq".
func WithJobQueuePath(segment string) ClientOption {
	bad := segment == "" || strings.ContainsAny(segment, "/?#%")
	return option(func(c *clientConfig) { c.jobQueue = segment }, bad, "WithJobQueuePath", "must be one non-empty path segment, got %q", segment)
}

// WithAPIPath sets the API prefix appended to the base URL. The default is
// "api/v3"; the runner package uses "ci/api/v1".
func WithAPIPath(p string) ClientOption {
	return func(c *clientConfig) error { c.apiPrefix = strings.Trim(p, "/"); return nil }
}

// NewClient returns a client for the service at baseURL, which may be given
// with or without a trailing slash and with or without the API prefix.
//
// Timeouts. The default http.Client has no overall timeout, because one would
// also cut a long artifact download; its transport waits at most
// DefaultResponseHeaderTimeout for a response to start. Bound a call with its
// context (context.WithTimeout), or give WithHTTPClient a client whose
// Timeout suits every call you make.
func NewClient(baseURL string, opts ...ClientOption) (*Client, error) {
	cfg := clientConfig{userAgent: defaultUserAgent, apiPrefix: apiV3Path, jobQueue: "jobqueue", retry: DefaultRetryPolicy(), maxBody: DefaultMaxResponseSize}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	base, err := parseBaseURL(baseURL, cfg.apiPrefix)
	if err != nil {
		return nil, err
	}
	var own *http.Transport
	var hc *http.Client
	if cfg.httpClient != nil {
		cp := *cfg.httpClient // never change the caller's client
		hc = &cp
	} else {
		own = NewTransport()
		hc = &http.Client{Transport: own}
	}
	c := &Client{
		baseURL:   base,
		base:      base.String(),
		logger:    cfg.logger,
		userAgent: cfg.userAgent,
		authKey:   cfg.authKey,
		authValue: cfg.authValue,
		jobQueue:  cfg.jobQueue,
		maxBody:   cfg.maxBody,
		learned:   &learnedSecrets{},
		retry:     cfg.retry,
		observer:  cfg.observer,
		gov:       newGovernor(&cfg),
		own:       own,
	}
	hc.CheckRedirect = c.safeRedirects(hc.CheckRedirect)
	c.http = hc
	ac := *hc
	ac.Transport = keepIdleConns{transportOf(hc)}
	c.attempt = &ac
	c.initServices()
	return c, nil
}

// ErrUnsafeRedirect matches the error of a call whose redirect was refused
// because following it would send the request body to another origin (a
// different scheme, host or port, https to http included). A body may carry a
// credential, such as the runner token in a form field, so the call fails
// rather than resend it; it is not retried.
var ErrUnsafeRedirect = errors.New("collab: refused a redirect that would send the request body to another origin")

// safeRedirects wraps a redirect policy (nil means net/http's default of at
// most 10 redirects) so that no credential leaves the client's origin:
//   - within the origin, a redirect is followed as is;
//   - once a redirect leaves it (another scheme, host or port, https to http
//     included), credential headers are removed from that request and every
//     later one of the chain, even one that comes back;
//   - a redirect that leaves it and would resend a body (307 and 308 keep the
//     method and body) is refused with ErrUnsafeRedirect.
//
// So a GET, such as an artifact download redirected to storage, reaches the
// other host without any token.
func (c *Client) safeRedirects(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		left := !c.sameOrigin(req.URL)
		for _, v := range via {
			left = left || !c.sameOrigin(v.URL)
		}
		if left {
			if req.Body != nil && req.Body != http.NoBody {
				return &redirectError{fmt.Errorf("%w (to %s)", ErrUnsafeRedirect, originOf(req.URL))}
			}
			// net/http itself drops only Authorization and Cookie, and only
			// for another domain; it would copy PRIVATE-TOKEN to any host.
			for _, h := range wire.CredentialHeaders {
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

// originOf renders scheme://host of u, which is all an error needs.
func originOf(u *url.URL) string { return u.Scheme + "://" + u.Host }

// redirectError is a refusal of the redirect policy; retrying cannot help.
type redirectError struct{ err error }

func (e *redirectError) Error() string { return e.err.Error() }
func (e *redirectError) Unwrap() error { return e.err }

// keepIdleConns is the transport go-retryablehttp sends through: it hides
// the CloseIdleConnections of the transport below, which retryablehttp
// calls whenever a call fails and which would drop the idle connections of
// every other call in flight.
type keepIdleConns struct{ http.RoundTripper }

func transportOf(hc *http.Client) http.RoundTripper {
	if hc.Transport != nil {
		return hc.Transport
	}
	return http.DefaultTransport
}

// NewTransport returns a new transport with the settings a client uses
// when WithHTTPClient is not given: no overall deadline, which would cut
// long downloads, but a server that accepts a request and never answers is
// given up after DefaultResponseHeaderTimeout; response headers are bounded;
// and up to 32 idle connections per host are kept for calls in parallel.
// Wrap it to put middleware under a client:
//
//	hc := &http.Client{Transport: myMiddleware(collab.NewTransport())}
//	c, err := collab.NewClient(url, collab.WithHTTPClient(hc))
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 32 // prefetching iterators and bots run calls in parallel
	t.ResponseHeaderTimeout = DefaultResponseHeaderTimeout
	t.MaxResponseHeaderBytes = 256 << 10
	return t
}

// DefaultResponseHeaderTimeout is how long the default transport waits for
// the headers of a response once the request is sent.
const DefaultResponseHeaderTimeout = 60 * time.Second

func parseBaseURL(raw, prefix string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, invalidArg("baseURL", "%v", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, invalidArg("baseURL", "must be an absolute http or https URL, got %q", wire.RedactURL(u))
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, invalidArg("baseURL", "must not carry credentials, a query or a fragment")
	}
	p := strings.TrimRight(u.Path, "/")
	for _, known := range []string{"/" + apiV3Path, "/" + runnerAPIPath} {
		p = strings.TrimSuffix(p, known)
	}
	u.Path = p + "/" + prefix + "/"
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
	c.Users = &UsersService{client: c}
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

// ForAPIPath returns a copy of c whose requests go under another API prefix
// of the same server (as WithAPIPath sets it), with the same token, Sudo
// user, transport, retry policy, observer and limits. The copy and c share
// their rate, concurrency and pause budget; the runner package builds its
// client this way from an existing one.
func (c *Client) ForAPIPath(prefix string) (*Client, error) {
	base, err := parseBaseURL(c.baseURL.String(), strings.Trim(prefix, "/"))
	if err != nil {
		return nil, err
	}
	cp := *c
	cp.baseURL, cp.base = base, base.String()
	cp.initServices()
	return &cp, nil
}

// Close frees what the client made: the idle connections of the transport
// NewClient made when WithHTTPClient was not given. A program that makes
// many short-lived clients should close each when done with it, or keep one
// client for the process: otherwise each keeps its connections (and their
// goroutines) until the transport's idle timeout, 90 s.
//
// A client given with WithHTTPClient belongs to the caller, who may share
// it: Close leaves it, and its connections, alone; call its
// CloseIdleConnections when done with it.
//
// The client stays usable after Close; its next request opens a
// connection. Sudo and ForAPIPath copies share the transport, so closing
// one closes the idle connections of all. Close returns nil: closing idle
// connections cannot fail. It returns an error so that a Client is an
// io.Closer.
func (c *Client) Close() error {
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
	return nil
}

// NewRequest builds a request for path, which is relative to the API root
// (for example "projects/1/issues") and must already be escaped. opt is
// encoded with go-querystring: into the query for GET, HEAD and DELETE, and
// into a form body for other methods. An opt that is an io.Reader is sent as
// the raw body instead. Authentication, Sudo and User-Agent headers are set.
func (c *Client) NewRequest(ctx context.Context, method, path string, opt any) (*http.Request, error) {
	if ctx == nil {
		return nil, invalidArg("ctx", "is nil")
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
		values, err := encodeOpts(opt)
		if err != nil {
			return nil, err
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
		return nil, invalidArg("method", "%v", err)
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
			return nil, invalidArg("path", "%v", err)
		}
		if !c.sameOrigin(u) {
			return nil, invalidArg("path", "refusing to send credentials to %s", originOf(u))
		}
		return u, nil
	}
	u, err := url.Parse(c.base + strings.TrimPrefix(path, "/"))
	if err != nil {
		return nil, invalidArg("path", "%v", err)
	}
	return u, nil
}

func (c *Client) sameOrigin(u *url.URL) bool {
	return u.Scheme == c.baseURL.Scheme && strings.EqualFold(u.Host, c.baseURL.Host)
}

// Do sends req, retrying as the RetryPolicy allows, and decodes a 2xx body into v:
// JSON for most values, or a raw copy when v is an io.Writer. Any other status
// becomes an *ErrorResponse. v may be nil.
//
// A JSON body is read whole, up to the client's maximum response size
// (WithMaxResponseSize), before it is decoded; past that the call fails with
// ErrResponseTooLarge. A copy to an io.Writer streams without that limit and
// without buffering.
func (c *Client) Do(req *http.Request, v any) (*Response, error) {
	if req == nil {
		return nil, invalidArg("req", "is nil")
	}
	return c.do(req, "", v)
}

// do is Do for a call whose route template is tmpl ("" when unknown).
func (c *Client) do(req *http.Request, tmpl string, v any) (*Response, error) {
	cl, req := c.startCall(req, tmpl)
	resp, err := c.bareDo(cl, req)
	if err == nil {
		err = c.decode(req, resp, v)
		closeBody(resp.Body)
	}
	cl.end(resp, err)
	return resp, err
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
	body, err := readBody(resp.Response, c.maxBody)
	if err == nil {
		switch {
		case len(bytes.TrimSpace(body)) == 0:
			err = errEmptyBody
		case len(body) > 4<<10:
			err = checkListCost(body, v, c.maxBody)
		}
	}
	if err == nil {
		err = jsonkeep.Public[FieldErrors](jsonkeep.Unmarshal(body, v))
	}
	if err != nil {
		return c.decodeError(req, err)
	}
	return nil
}

func (c *Client) decodeError(req *http.Request, err error) error {
	return &DecodeError{Method: req.Method, URL: wire.RedactURL(req.URL), Err: err, secrets: c.secretsOf(req)}
}

// readBody reads a whole body of at most limit bytes, decompressing a gzip
// body the transport left compressed. With a Content-Length it allocates
// once. Otherwise its buffer doubles from 512 bytes; once it holds an eighth
// of the limit it grows straight to the limit, so that a body that runs past
// the limit costs about 1.25 times the limit, not the 2 or 3 times that
// doubling all the way would.
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	r, size := bodyReader(resp)
	if size > limit {
		return nil, tooLarge(limit)
	}
	maxCap := limit + 1 // one byte past the limit tells a body that is too large
	start := min(512, maxCap)
	if size >= 0 {
		start = size + 1
	}
	buf := make([]byte, 0, start)
	for {
		if len(buf) == cap(buf) {
			if int64(cap(buf)) >= maxCap {
				return nil, tooLarge(limit)
			}
			next := 2 * int64(cap(buf))
			if int64(cap(buf)) >= maxCap/8 {
				next = maxCap
			}
			grown := make([]byte, len(buf), min(max(next, 512), maxCap))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, tooLarge(limit)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// checkListCost refuses a list whose records would take more memory than
// the size limit: each element, even "{}" or "1", allocates a whole record,
// so a body of tiny elements could otherwise cost a hundred times its size.
// Honest records are larger in JSON than in memory, so this never refuses
// one; the count is only made for bodies large enough to matter.
func checkListCost(body []byte, v any, limit int64) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Slice {
		return nil
	}
	et := t.Elem().Elem()
	size := int64(et.Size())
	if et.Kind() == reflect.Pointer {
		size += int64(et.Elem().Size())
	}
	if int64(len(body))/2*size <= limit { // even "1,1,1,…" could not reach it
		return nil
	}
	if n := int64(jsonkeep.CountElements(body)); n*size > limit {
		return fmt.Errorf("%w: the limit is %d bytes (WithMaxResponseSize), and the %d records of this list would take %d", ErrResponseTooLarge, limit, n, n*size)
	}
	return nil
}

// bodyReader returns the body to read and its length if known (else -1).
// A body sent with Content-Encoding gzip that the transport did not
// decompress (it only does when it asked for gzip itself) is decompressed
// here, so that the limits apply to what is decoded.
func bodyReader(resp *http.Response) (io.Reader, int64) {
	enc := resp.Header.Get("Content-Encoding")
	if resp.Uncompressed || (!strings.EqualFold(enc, "gzip") && !strings.EqualFold(enc, "x-gzip")) {
		return resp.Body, resp.ContentLength
	}
	br := bufio.NewReaderSize(resp.Body, 512)
	if magic, _ := br.Peek(2); len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, -1 // labelled gzip but plain: read it as it is
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return br, -1
	}
	return zr, -1
}

func tooLarge(limit int64) error {
	return fmt.Errorf("%w: the limit is %d bytes (WithMaxResponseSize)", ErrResponseTooLarge, limit)
}

// BareDo sends req like Do but leaves the body of a 2xx response open for the
// caller to read and close. It is the way to stream large downloads: nothing
// limits or buffers what the caller reads.
func (c *Client) BareDo(req *http.Request) (*Response, error) {
	if req == nil {
		return nil, invalidArg("req", "is nil")
	}
	cl, req := c.startCall(req, "")
	resp, err := c.bareDo(cl, req)
	cl.end(resp, err)
	return resp, err
}

func (c *Client) bareDo(cl *call, req *http.Request) (*Response, error) {
	if err := checkHeaders(req.Header); err != nil {
		return nil, err
	}
	hresp, err := c.exchange(cl, req)
	if err != nil {
		if hresp != nil {
			closeBody(hresp.Body)
		}
		return nil, c.transportError(req, err)
	}
	resp := newResponse(hresp)
	resp.Waited = cl.waited
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		defer closeBody(hresp.Body)
		return resp, newErrorResponse(hresp, req.Method, req.URL, c.secretsOf(req))
	}
	return resp, nil
}

// checkHeaders refuses a header value that net/http would refuse to send
// (a Sudo user with a line break, say) before any attempt, so that it fails
// at once instead of being retried as a connection error. The value is not
// echoed: it may be a credential.
func checkHeaders(h http.Header) error {
	for k, vs := range h {
		for _, v := range vs {
			for i := 0; i < len(v); i++ {
				if b := v[i]; (b < 0x20 && b != '\t') || b == 0x7f {
					return invalidArg("header "+k, "contains a control character (a line break?)")
				}
			}
		}
	}
	return nil
}

func (c *Client) transportError(req *http.Request, err error) error {
	err = unwrapURLError(err)
	return &RequestError{Method: req.Method, URL: wire.RedactURL(req.URL), Err: err, secrets: c.secretsOf(req)}
}

// secretsOf lists every credential the client holds or req carries: token
// headers, credential parameters in the query and in a form body. An error
// about req replaces each of them wherever the server repeated it.
func (c *Client) secretsOf(req *http.Request) []string {
	var out []string
	if v := strings.TrimSpace(c.authValue); v != "" {
		out = append(out, v)
	}
	out = append(out, c.learned.all()...)
	return append(out, wire.RequestSecrets(req)...)
}

// closeBody drains a little of what is left so the connection can be reused.
func closeBody(b io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, b, 4<<10)
	_ = b.Close()
}

// endpoint is an escaped request path, or the error met while building it,
// so that a method can hand route's result straight to do.
type endpoint struct {
	s    string
	tmpl string // the route template, "/projects/:id/issues"; "" when unknown
	err  error
}

// route fills each %s in format with one escaped path segment. Values may be
// any integer type (an id, which must be positive) or a string (an id or a
// "namespace/name" path); any other type, an empty string or an id below 1
// is an *ArgumentError named after the path segment before it.
func route(format string, args ...any) endpoint {
	s, err := wire.Route(argumentError, format, args...)
	if err != nil {
		return endpoint{err: err}
	}
	return endpoint{s: s, tmpl: wire.Template(format)}
}

// argumentError is the error of a value the route builder refused.
func argumentError(arg, reason string) error { return &ArgumentError{Arg: arg, Reason: reason} }

// do sends one request and decodes the record it returns. A JSON null where
// a record was expected is an error, never a nil result. A record some of
// whose values did not fit comes back with the error (see FieldErrors).
func do[T any](ctx context.Context, c *Client, method string, p endpoint, opt any) (*T, *Response, error) {
	var v *T
	resp, err := send(ctx, c, method, p, opt, &v)
	return result(c, v, resp, err)
}

// result is what a call returns for the record v, decoded with err: v
// alone, v with FieldErrors, or an error without v.
func result[T any](c *Client, v *T, resp *Response, err error) (*T, *Response, error) {
	if err != nil && !partial(err) {
		return nil, resp, err
	}
	if v == nil {
		return nil, resp, c.decodeError(resp.Request, errUnexpectedNullResult)
	}
	return v, resp, err
}

// partial reports whether err comes with a record: some of its values did
// not fit their fields (see FieldErrors).
func partial(err error) bool {
	var fe FieldErrors
	return errors.As(err, &fe)
}

// doChecked is do for an opt that checkRequired must accept first, with
// the required fields named.
func doChecked[T, O any](ctx context.Context, c *Client, method string, p endpoint, opt *O, required ...string) (*T, *Response, error) {
	if err := checkRequired(opt, required...); err != nil {
		return nil, nil, err
	}
	return do[T](ctx, c, method, p, opt)
}

// doList sends one request and decodes the array it returns, without the
// null elements a server may put in it. A page some of whose values did not
// fit comes back with the error (see FieldErrors); any other error comes
// with no page.
func doList[T any](ctx context.Context, c *Client, method string, p endpoint, opt any) ([]*T, *Response, error) {
	var v []*T
	resp, err := send(ctx, c, method, p, opt, &v)
	if err != nil && !partial(err) {
		return nil, resp, err
	}
	return dropNil(v), resp, err
}

// send builds, sends and decodes into v (which may be nil to discard the body).
func send(ctx context.Context, c *Client, method string, p endpoint, opt, v any) (*Response, error) {
	if p.err != nil {
		return nil, p.err
	}
	req, err := c.NewRequest(ctx, method, p.s, opt)
	if err != nil {
		return nil, err
	}
	return c.do(req, p.tmpl, v)
}

// errRequired reports a required parameter missing before any request is sent.
func errRequired(what string) error { return invalidArg(what, "is required") }

// checkRequired refuses a nil opt, a pointer to an options struct, and then
// the first of the named fields that holds its zero value (an empty string,
// a 0), each by the name the caller knows it by: "opt", "opt.Title".
//
// The names are the options struct's own field names, checked by the tests
// of each method that passes them.
func checkRequired[O any](opt *O, fields ...string) error {
	if opt == nil {
		return errRequired("opt")
	}
	v := reflect.ValueOf(opt).Elem()
	for _, name := range fields {
		if v.FieldByName(name).IsZero() {
			return errRequired("opt." + name)
		}
	}
	return nil
}

// encodeInto merges the go-querystring encoding of opt into v.
func encodeInto(v *url.Values, opt any) error {
	vals, err := encodeOpts(opt)
	if err != nil {
		return err
	}
	for k, vs := range vals {
		(*v)[k] = vs
	}
	return nil
}

// encodeOpts encodes an options struct. An option that refuses its own
// value (a build scope outside the set, say) keeps its *ArgumentError.
func encodeOpts(opt any) (url.Values, error) {
	v, err := query.Values(opt)
	if err == nil {
		return v, nil
	}
	var ae *ArgumentError
	if errors.As(err, &ae) {
		return nil, ae
	}
	return nil, invalidArg("opt", "cannot be encoded: %v", err)
}
