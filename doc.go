// Package collab is a typed client for the Collaboration Service REST API:
// the consumer API under {base}/api/v3 (projects, issues, merge requests,
// labels, award emoji, notes, milestones, builds, groups, members, hooks,
// branches, uploads, settings and job-queue metrics). The runner API lives in
// the runner sub-package, and collabtest is an in-memory fake server of the
// whole API for examples and tests.
//
// # A call
//
//	c, err := collab.NewClient("https://collab.example.com", collab.WithPrivateToken(token))
//	issue, resp, err := c.Issues.Create(ctx, "group/project", &collab.CreateIssueOptions{Title: "Crash on save"})
//	opt := &collab.ListMergeRequestsOptions{State: collab.Ptr(collab.MergeRequestOpened)}
//	for mr, err := range c.MergeRequests.All(ctx, 42, opt) { ... }
//	admin := c.Sudo("alice") // a copy of the client that acts as alice
//
// Every method takes a context first and returns (result, *Response, error),
// or (*Response, error) when there is no record. Bound a call with the
// context's deadline; the Timeout of a client given to WithHTTPClient applies
// to each attempt. A project or group argument is an integer id of any
// integer type or a "namespace/name" string. Every path value is escaped into
// exactly one segment ("/" as %2F, "." as %2E), so no argument can change
// which endpoint is called. The doc comment of each method names its endpoint
// on a line "API: METHOD /path".
//
// # Options
//
// Optional parameters are pointer fields, left out when nil; Ptr makes a
// pointer to a literal. Where the API accepts a closed set of values the
// field has its own string type with constants, so that a typo or a value of
// the wrong set does not compile:
//
//	&collab.UpdateIssueOptions{StateEvent: collab.Ptr(collab.IssueClose)}     // IssueClosed would not compile here
//	&collab.ListIssuesOptions{OrderBy: collab.Ptr(collab.OrderByUpdatedAt), Sort: collab.Ptr(collab.SortAsc)}
//	&collab.ListBuildsOptions{Scope: collab.BuildScopes{collab.BuildFailed}}
//
// Label lists are a LabelNames value, sent as one comma-separated parameter.
// In create options a plain LabelNames sets the labels of the new record. In
// update options it is a *LabelNames, because an update needs three meanings:
// nil keeps the labels, a pointer to an empty list clears them, and a pointer
// to names sets exactly those.
//
// # IDs and IIDs
//
// Issues, merge requests and milestones carry two numbers. ID is global to
// the instance, and it is what every method taking an issueID, mrID or
// milestoneID expects. IID is the number the project shows: #5 for an issue,
// !5 for a merge request. Passing an IID where an ID belongs reads or changes
// another record. To act on the #5 a user gives you, call
// IssuesService.GetByIID (or MergeRequestsService.GetByIID) and use the ID of
// the record it returns.
//
// # Errors
//
// A non-2xx answer is an *ErrorResponse (errors.As) that matches a sentinel
// with errors.Is: ErrNotModified (304, such as starring twice),
// ErrBadRequest, ErrUnauthorized, ErrForbidden, ErrNotFound,
// ErrMethodNotAllowed, ErrNotAcceptable, ErrConflict, ErrRequestTooLarge,
// ErrRangeNotSatisfiable, ErrUnprocessable, ErrTooManyRequests (429, once
// retries are spent, so throttling can be told from a fault) and ErrServer
// (any 5xx). ErrorResponse keeps the method, the redacted URL, the status,
// the server's message, any validation errors by field, up to 64 KiB of the
// body and the response headers, but not the *http.Response, whose request
// carries the token: an error can be logged whole.
//
// A call the client refuses before sending anything (a missing required
// option, a nil options struct where one is required, an empty or
// non-positive path value, a malformed value such as a label colour) returns
// an *ArgumentError naming the argument, which matches ErrInvalidArgument.
// A failure to get any answer is a *RequestError; a 2xx body that does not
// decode, or a JSON null where a record belongs, is a *DecodeError; when
// only some values did not fit, it wraps FieldErrors and the record comes
// back with it (see FieldErrors). No error
// and no log line ever carries a token: tokens travel in headers only, and
// URLs are redacted before they are printed.
//
// # Records
//
// Records decode every shape the servers send: timestamps are a Time, which
// embeds time.Time and reads ISO 8601 with or without fractions or a zone,
// and date-only values (which keep DateOnly and encode back as a date);
// flags sent as "true", 1 or "yes" are a bool; ids sent as strings are an
// int. A value the server may send as null is a pointer, so a record
// decoded and encoded again keeps every key and value it came with.
//
// Records are plain values: keys a type has no field for stay in its Extra
// map, a decoded record equals the same record built in code (under
// reflect.DeepEqual, testify or cmp), and encoding depends on the value
// alone: every field is written, so a key that arrived as null or 0 comes
// back. Times decode in UTC for a zero offset and in a fixed zone otherwise,
// whatever the machine's zone. Credentials (a private token, a runners
// token) are a Secret, which never prints, logs or encodes its value.
//
// # Pagination
//
// Response carries the X-Total, X-Total-Pages, X-Per-Page, X-Page,
// X-Next-Page and X-Prev-Page headers and the Link URLs. A List method
// returns one page. Its All sibling returns an iter.Seq2[*T, error] over
// every item of every page from the options' Page (the first when 0) to the
// last, asking for PerPage items a request (100, the most the server gives,
// when 0); this holds for every All method, whose own doc only names the
// List it walks. It follows Link next only on the client's own origin (page numbers
// otherwise), makes no request after the loop breaks, and yields an error as
// its last element. The Prefetch iterator option, as in
// c.Issues.All(ctx, pid, opt, collab.Prefetch(8)), fetches later pages
// concurrently, still yielding items in order.
//
// Neither a List method nor an iterator hands over a nil record: a JSON null
// among a list's elements is skipped. An iterator always ends: it never asks
// for a page twice, stops at the first empty page, and ends with an error
// matching ErrPaginationLoop when the server's pagination points backwards
// or in a circle. X-Total-Pages only guides prefetching.
//
// # Limits
//
// A JSON body is decoded up to WithMaxResponseSize (32 MiB by default),
// counted after decompression; past it the call fails with an error matching
// ErrResponseTooLarge. Downloads into an io.Writer are streamed and not
// capped. A redirect that leaves the client's origin never carries a
// credential, and one that would resend a body there is refused with
// ErrUnsafeRedirect. err.Error() is always one line, with control characters
// escaped and every secret the client holds or sends replaced by [redacted].
//
// # Retries
//
// Requests go through go-retryablehttp, each attempt past the client's rate
// and concurrency limits. GET, HEAD, PUT and DELETE are retried
// on connection errors and on 429, 500, 502, 503 and 504; POST and PATCH only
// on 429 or when the request provably never left (a failed dial), so a write
// is never duplicated. Retry-After (seconds or an HTTP date) is honoured up
// to the maximum wait; otherwise the wait grows exponentially with jitter. A
// body is resent only when it can be rewound (Request.GetBody), and a
// cancelled context ends any wait at once. WithRetry and WithoutRetries set
// the policy; WithLogger logs attempts and retries at debug level.
//
// # Requests of your own
//
// NewRequest builds a plain *http.Request for any endpoint, with the
// client's base URL, token and headers; Do sends it with the client's
// retries and decodes the answer, and BareDo leaves the body open for
// streaming. Credentials are removed from any redirect that leaves the
// client's origin, whatever *http.Client is used, so a download redirected to
// storage elsewhere never receives the token.
package collab
