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
//	for mr, err := range c.MergeRequests.All(ctx, 42, &collab.ListMergeRequestsOptions{State: collab.Ptr("opened")}) { ... }
//	admin := c.Sudo("alice") // a copy of the client that acts as alice
//
// Every method takes a context first and returns (result, *Response, error),
// or (*Response, error) when there is no record. A project or group argument
// is an int, an int64 or a "namespace/name" string; any other type is an
// error, never a panic. Optional parameters are pointer fields, left out when
// nil. Every path value is escaped into exactly one segment ("/" as %2F, "."
// as %2E), so no argument can change which endpoint is called.
//
// # Errors
//
// A non-2xx answer is an *ErrorResponse (errors.As) that matches a sentinel
// with errors.Is: ErrNotModified (304, such as starring twice),
// ErrBadRequest, ErrUnauthorized, ErrForbidden, ErrNotFound,
// ErrMethodNotAllowed, ErrNotAcceptable, ErrConflict, ErrRequestTooLarge,
// ErrRangeNotSatisfiable, ErrUnprocessable, ErrTooManyRequests and ErrServer
// (any 5xx). A failure to get any answer is a *RequestError; a 2xx body that
// does not decode, or a JSON null where a record belongs, is a *DecodeError.
// No error and no log line ever carries a token: tokens travel in headers
// only, and URLs are redacted before they are printed.
//
// # Pagination
//
// Response carries the X-Total, X-Total-Pages, X-Per-Page, X-Page,
// X-Next-Page and X-Prev-Page headers and the Link URLs. Every List method has
// an All sibling returning iter.Seq2[*T, error] over every page: 100 items a
// page, following Link next only on the client's own origin (page numbers
// otherwise), no request after the loop breaks, and an error as the last
// element. ListOptions.Prefetch fetches later pages concurrently, in order.
//
// # Retries
//
// Requests go through go-retryablehttp. GET, HEAD, PUT and DELETE are retried
// on connection errors and on 429, 500, 502, 503 and 504; POST and PATCH only
// on 429 or when the request provably never left (a failed dial), so a write
// is never duplicated. Retry-After (seconds or an HTTP date) is honoured up
// to the maximum wait; otherwise the wait grows exponentially with jitter. A
// body is resent only when it can be rewound (Request.GetBody), and a
// cancelled context ends any wait at once. WithRetry and WithoutRetries set
// the policy; WithLogger logs attempts and retries at debug level.
//
// # Where this package departs from DESIGN.md, and why
//
//   - NewRequest returns a plain *http.Request rather than go-retryablehttp's
//     type, so callers use only the standard library; Do wraps it without
//     copying the body, and rewinds it for a retry through GetBody.
//   - The prefetch option of the iterators is a field of ListOptions
//     (Prefetch, never sent to the server), so it is set per call where the
//     list options already are, rather than on the client for every list.
//   - ErrorResponse keeps the response headers but not the *http.Response:
//     the request inside it carries the token header, and an error value is
//     the kind of thing that gets logged whole.
//   - ErrTooManyRequests (429) is a sentinel too: a bot that exhausted its
//     retries wants to tell throttling from a server fault.
//   - Timestamps decode into Time, which embeds time.Time: the server sends
//     ISO 8601 with and without fractions or zones, and date-only values,
//     which time.Time's own decoder rejects.
//   - Label lists are a Labels type rather than []string with a comma tag:
//     go-querystring drops an empty slice, so a *Labels pointing at an empty
//     list is the only way to clear an issue's labels.
//   - Credentials are stripped from any redirect that leaves the client's
//     origin, for every request and any *http.Client: net/http forwards
//     custom headers such as PRIVATE-TOKEN to other hosts, and artifacts may
//     be redirected to storage elsewhere.
//   - Merge's 405 and 406 carry opposite meanings in the contract and on
//     deployed servers, so MergeRequestsService documents both and promises
//     only the sentinels, not one meaning per code.
package collab
