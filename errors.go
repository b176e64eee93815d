package collab

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/collabsvc/collab/internal/wire"
)

// Sentinel errors, matched with errors.Is against any error the SDK returns
// for a response with that status.
var (
	ErrNotModified         = errors.New("collab: not modified")             // 304
	ErrBadRequest          = errors.New("collab: bad request")              // 400
	ErrUnauthorized        = errors.New("collab: unauthorized")             // 401
	ErrForbidden           = errors.New("collab: forbidden")                // 403
	ErrNotFound            = errors.New("collab: not found")                // 404
	ErrMethodNotAllowed    = errors.New("collab: method not allowed")       // 405
	ErrNotAcceptable       = errors.New("collab: not acceptable")           // 406
	ErrConflict            = errors.New("collab: conflict")                 // 409
	ErrRequestTooLarge     = errors.New("collab: request entity too large") // 413
	ErrRangeNotSatisfiable = errors.New("collab: range not satisfiable")    // 416
	ErrUnprocessable       = errors.New("collab: unprocessable entity")     // 422
	ErrTooManyRequests     = errors.New("collab: too many requests")        // 429
	ErrServer              = errors.New("collab: server error")             // any 5xx

	// ErrResponseTooLarge matches a call whose response body was larger
	// than the client's limit (WithMaxResponseSize); the error names the limit.
	ErrResponseTooLarge = errors.New("collab: response body too large")

	// ErrPaginationLoop matches an iterator that stopped because the server's
	// pagination went backwards or in a circle: a next page that was already
	// fetched, or a page other than the one asked for.
	ErrPaginationLoop = errors.New("collab: pagination loop")

	// ErrInvalidArgument matches every *ArgumentError: a call the client
	// refused before sending anything.
	ErrInvalidArgument      = errors.New("collab: invalid argument")
	errEmptyBody            = errors.New("empty response body") // a 2xx with nothing to decode
	errUnexpectedNullResult = errors.New("server answered null instead of a record")
	errUploadRejected       = errors.New("server answered null: the file was missing or larger than the attachment limit")
)

var statusSentinels = map[int]error{
	http.StatusNotModified:                  ErrNotModified,
	http.StatusBadRequest:                   ErrBadRequest,
	http.StatusUnauthorized:                 ErrUnauthorized,
	http.StatusForbidden:                    ErrForbidden,
	http.StatusNotFound:                     ErrNotFound,
	http.StatusMethodNotAllowed:             ErrMethodNotAllowed,
	http.StatusNotAcceptable:                ErrNotAcceptable,
	http.StatusConflict:                     ErrConflict,
	http.StatusRequestEntityTooLarge:        ErrRequestTooLarge,
	http.StatusRequestedRangeNotSatisfiable: ErrRangeNotSatisfiable,
	http.StatusUnprocessableEntity:          ErrUnprocessable,
	http.StatusTooManyRequests:              ErrTooManyRequests,
}

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 64 << 10

// ErrorResponse is a non-2xx answer from the server.
type ErrorResponse struct {
	StatusCode int                 // HTTP status
	Method     string              // request method
	URL        string              // request URL with any credentials removed
	Message    string              // the server's message, as one line of clean text
	Fields     map[string][]string // validation errors; nested keys joined with "."
	Body       []byte              // at most 64 KiB of the raw body, credentials replaced
	Header     http.Header         // response headers (Range, Retry-After, ...), credentials replaced
}

// Error reads as one line, for example
// "PUT /api/v3/projects/1/merge_requests/5/merge: 409 Conflict: SHA does not match HEAD of source branch".
// The server's message is cut to a few hundred bytes, with control
// characters escaped.
func (e *ErrorResponse) Error() string {
	s := requestName(e.Method, e.URL) + ": " + strconv.Itoa(e.StatusCode) + " " + http.StatusText(e.StatusCode)
	if msg := trimStatusPrefix(wire.CleanText(e.Message, wire.MaxMessage), e.StatusCode); msg != "" {
		s += ": " + msg
	}
	return s
}

// requestName names a request the same way in every error: the method and
// the escaped path, without host or query.
func requestName(method, rawURL string) string {
	path := rawURL
	if u, err := url.Parse(rawURL); err == nil {
		path = u.EscapedPath()
	}
	return wire.CleanText(method, 32) + " " + wire.CleanText(path, 1024)
}

// Is matches the sentinel for e's status.
func (e *ErrorResponse) Is(target error) bool {
	if e.StatusCode >= 500 && target == ErrServer {
		return true
	}
	s, ok := statusSentinels[e.StatusCode]
	return ok && s == target
}

// trimStatusPrefix drops a leading "404 " or "404 Not Found" the server
// repeats from the status line.
func trimStatusPrefix(msg string, code int) string {
	rest, ok := strings.CutPrefix(msg, strconv.Itoa(code))
	if !ok {
		return msg
	}
	rest = strings.TrimSpace(rest)
	if t := http.StatusText(code); strings.EqualFold(rest, t) {
		return ""
	} else if r, ok := strings.CutPrefix(rest, t+":"); ok {
		return strings.TrimSpace(r)
	}
	return rest
}

// newErrorResponse reads at most maxErrorBody bytes of the body (after any
// decompression) and replaces each of secrets wherever it appears.
func newErrorResponse(resp *http.Response, method string, u *url.URL, secrets []string) *ErrorResponse {
	r, _ := bodyReader(resp)
	body, _ := io.ReadAll(io.LimitReader(r, maxErrorBody))
	if len(body) == maxErrorBody {
		body = dropSecretPrefix(body, secrets)
	}
	body = []byte(wire.Redact(string(body), secrets))
	e := &ErrorResponse{StatusCode: resp.StatusCode, Method: method, URL: wire.RedactURL(u), Body: body, Header: redactHeader(resp.Header, secrets)}
	e.Message, e.Fields = parseErrorBody(body)
	e.Message = wire.SafeText(e.Message, secrets, wire.MaxMessage)
	for k, vs := range e.Fields {
		for i, v := range vs {
			vs[i] = wire.SafeText(v, secrets, wire.MaxMessage)
		}
		if ck := wire.SafeText(k, secrets, 128); ck != k {
			delete(e.Fields, k)
			e.Fields[ck] = append(e.Fields[ck], vs...)
		}
	}
	return e
}

// parseErrorBody reads the five body shapes servers send: a message
// string, a message object of validation errors, an "error" string, a bare
// array of strings, and anything else as a short excerpt of text.
func parseErrorBody(body []byte) (string, map[string][]string) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return "", nil
	}
	var v any
	if err := json.Unmarshal(trimmed, &v); err != nil {
		return excerpt(trimmed), nil
	}
	switch t := v.(type) {
	case map[string]any:
		for _, key := range []string{"message", "error", "error_description"} {
			m, ok := t[key]
			if !ok {
				continue
			}
			if s, ok := m.(string); ok {
				return oneLine(s), nil
			}
			fields := map[string][]string{}
			flattenFields("", m, fields)
			return fieldsMessage(fields), fields
		}
		return excerpt(trimmed), nil
	case []any:
		fields := map[string][]string{}
		flattenFields("", t, fields)
		return strings.Join(fields[""], "; "), nil
	case string:
		return oneLine(t), nil
	}
	return excerpt(trimmed), nil
}

func flattenFields(prefix string, v any, out map[string][]string) {
	switch t := v.(type) {
	case map[string]any:
		for k, sub := range t {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flattenFields(key, sub, out)
		}
	case []any:
		for _, item := range t {
			flattenFields(prefix, item, out)
		}
	case string:
		out[prefix] = append(out[prefix], oneLine(t))
	case nil:
	default:
		b, _ := json.Marshal(t)
		out[prefix] = append(out[prefix], string(b))
	}
}

func fieldsMessage(fields map[string][]string) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		msg := strings.Join(fields[k], ", ")
		if k != "" {
			msg = k + " " + msg
		}
		parts = append(parts, msg)
	}
	return strings.Join(parts, "; ")
}

const maxExcerpt = 200

// excerpt turns a body that is not JSON (an HTML page from a proxy, say) into
// a short line of text.
func excerpt(b []byte) string {
	s := strings.ToValidUTF8(string(b), "")
	if strings.Contains(strings.ToLower(s[:min(len(s), 512)]), "<html") {
		s = stripTags(s)
	}
	s = oneLine(s)
	if len(s) > maxExcerpt {
		cut := maxExcerpt
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func stripTags(s string) string {
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '<':
			depth++
		case r == '>' && depth > 0:
			depth--
			b.WriteByte(' ')
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// ArgumentError reports an argument the client refused before sending a
// request: a missing required option, a nil options struct, a path value of
// the wrong type or out of range, or a malformed value such as a label colour.
// It matches ErrInvalidArgument with errors.Is.
type ArgumentError struct {
	Arg    string // the argument or option, as the caller knows it ("opt.Title", "pid")
	Reason string // what is wrong with it
}

func (e *ArgumentError) Error() string {
	return "collab: invalid argument " + e.Arg + ": " + e.Reason
}

// Is reports whether target is ErrInvalidArgument.
func (e *ArgumentError) Is(target error) bool { return target == ErrInvalidArgument }

// invalidArg returns an *ArgumentError for arg.
func invalidArg(arg, format string, a ...any) error {
	return &ArgumentError{Arg: arg, Reason: fmt.Sprintf(format, a...)}
}

// RequestError is a failure to get any response: a refused connection, a
// reset, a timeout, a cancelled context or a refused redirect. Unwrap gives
// the cause.
type RequestError struct {
	Method string
	URL    string // with any credentials removed
	Err    error

	secrets []string
}

// Error reads "METHOD /path: cause", on one line, credentials replaced.
func (e *RequestError) Error() string { return callText(e.Method, e.URL, "", e.Err, e.secrets) }

// Unwrap returns the underlying network or context error.
func (e *RequestError) Unwrap() error { return e.Err }

// DecodeError is a 2xx response whose body could not be read as the
// expected record, or was larger than the client's limit.
//
// When Err is FieldErrors, only some values did not fit: the call returns
// the record or the page too, with every other field set (see FieldErrors).
type DecodeError struct {
	Method string
	URL    string // with any credentials removed
	Err    error  // the JSON or I/O error (past the size limit, one matching ErrResponseTooLarge), or FieldErrors

	secrets []string
}

// Error reads "METHOD /path: decoding response: cause", on one line,
// credentials replaced.
func (e *DecodeError) Error() string {
	return callText(e.Method, e.URL, "decoding response: ", e.Err, e.secrets)
}

// Unwrap returns Err.
func (e *DecodeError) Unwrap() error { return e.Err }

// callText reads "METHOD /path: " then what went wrong: stage, and err,
// with secrets replaced.
func callText(method, url, stage string, err error, secrets []string) string {
	return requestName(method, url) + ": " + stage + wire.SafeText(fmt.Sprint(err), secrets, wire.MaxMessage)
}

// dropSecretPrefix removes the start of a secret that the read limit cut
// off at the end of body.
func dropSecretPrefix(body []byte, secrets []string) []byte {
	for _, sec := range secrets {
		for k := len(sec) - 1; k >= 4; k-- {
			if bytes.HasSuffix(body, []byte(sec[:k])) {
				return body[:len(body)-k]
			}
		}
	}
	return body
}

// redactHeader returns h, or a copy of it with secrets replaced when a
// header value repeats one.
func redactHeader(h http.Header, secrets []string) http.Header {
	out, copied := h, false
	for k, vs := range h {
		for i, v := range vs {
			if r := wire.Redact(v, secrets); r != v {
				if !copied {
					out, copied = h.Clone(), true
				}
				out[k][i] = r
			}
		}
	}
	return out
}
