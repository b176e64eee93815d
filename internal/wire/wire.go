// Package wire holds what the collab and runner packages share on the way to
// the server and back: request paths built from caller values, and the
// redaction that keeps credentials out of error text and logs. Both packages
// use it, so a path is checked and a secret is hidden the same way
// whichever client sends the request.
package wire

import (
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Refuse builds the error of a path value refused before any request:
// the caller's own exported error type, named after the argument, so that
// no internal error has to be copied into it on the way out.
type Refuse func(arg, reason string) error

// Route fills each %s in format with one escaped path segment. Values may be
// any integer type (an id, which must be positive) or a string (an id or a
// "namespace/name" path); any other type, an empty string or an id below 1
// is refused, with refuse, named after the path segment before it.
func Route(refuse Refuse, format string, args ...any) (string, error) {
	segs := make([]any, len(args))
	for i, a := range args {
		s, reason := segment(a)
		if reason != "" {
			return "", refuse(segmentName(format, i), reason)
		}
		segs[i] = s
	}
	return fmt.Sprintf(format, segs...), nil
}

// segmentName names the i-th %s of format after the literal segment before
// it: "projects/%s/issues/%s" gives "projects id" and "issues id".
func segmentName(format string, i int) string {
	parts := strings.SplitN(format, "%s", i+2)
	if i >= len(parts)-1 {
		return "path value"
	}
	before := strings.Trim(parts[i], "/")
	if j := strings.LastIndexByte(before, '/'); j >= 0 {
		before = before[j+1:]
	}
	if before == "" {
		return "path value"
	}
	return before + " id"
}

// Segment escapes one path value so that it can never change the endpoint:
// "/" becomes %2F and "." becomes %2E (the server reads a trailing ".json"
// as a format suffix). A value Route would refuse is an error saying why.
func Segment(v any) (string, error) {
	s, reason := segment(v)
	if reason != "" {
		return "", errors.New("path value " + reason)
	}
	return s, nil
}

// segment escapes v, or says why it is refused.
func segment(v any) (s, reason string) {
	switch t := v.(type) {
	case int:
		return positiveID(int64(t))
	case int64:
		return positiveID(t)
	case string:
		return stringSegment(t)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return positiveID(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if u := rv.Uint(); u > 0 {
			return strconv.FormatUint(u, 10), ""
		}
		return "", "must be a positive id, got 0"
	case reflect.String:
		return stringSegment(rv.String())
	}
	return "", fmt.Sprintf("must be an integer id or a string path, got %T", v)
}

func positiveID(n int64) (string, string) {
	if n < 1 {
		return "", fmt.Sprintf("must be a positive id, got %d", n)
	}
	return strconv.FormatInt(n, 10), ""
}

func stringSegment(s string) (string, string) {
	if s == "" {
		return "", "is empty"
	}
	return strings.ReplaceAll(url.PathEscape(s), ".", "%2E"), ""
}

// Marker replaces a credential wherever one would be shown.
const Marker = "[redacted]"

// SecretParams are query and form parameters that carry credentials.
var SecretParams = []string{"private_token", "access_token", "token", "build_token", "runner_token", "job_token", "password"}

// CredentialHeaders carry credentials, or act as a user (SUDO); they never
// follow a redirect to another origin.
var CredentialHeaders = []string{"PRIVATE-TOKEN", "Authorization", "Proxy-Authorization", "SUDO", "BUILD-TOKEN", "JOB-TOKEN", "Cookie"}

// IsSecretParam reports whether a query or form key carries a credential.
func IsSecretParam(key string) bool {
	for _, p := range SecretParams {
		if strings.EqualFold(key, p) {
			return true
		}
	}
	return false
}

// maxFormScan bounds how much of a form body is searched for credentials.
const maxFormScan = 1 << 20

// RequestSecrets lists every credential req carries: token headers and their
// bearer part, credential parameters in the query and in a rewindable form
// body. The SUDO header names a user and is not a secret.
func RequestSecrets(req *http.Request) []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	for _, h := range CredentialHeaders {
		if h == "SUDO" {
			continue
		}
		for _, v := range req.Header.Values(h) {
			add(v)
			if _, tok, ok := strings.Cut(v, " "); ok { // "Bearer <token>"
				add(tok)
			}
		}
	}
	addParams := func(q url.Values) {
		for k, vs := range q {
			if IsSecretParam(k) {
				for _, v := range vs {
					add(v)
				}
			}
		}
	}
	addParams(req.URL.Query())
	if req.GetBody != nil && strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if body, err := req.GetBody(); err == nil {
			b, _ := io.ReadAll(io.LimitReader(body, maxFormScan))
			_ = body.Close()
			q, _ := url.ParseQuery(string(b)) // what parsed, even if the end did not
			addParams(q)
		}
	}
	return out
}

// RedactURL renders u with user info removed and the value of every
// credential parameter replaced by Marker, so that a token a caller put in a
// URL never reaches an error or a log. A query that does not parse is
// replaced whole.
func RedactURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	cp := *u
	cp.User = nil
	if cp.RawQuery != "" {
		q, err := url.ParseQuery(cp.RawQuery)
		if err != nil {
			cp.RawQuery = Marker
			return cp.String()
		}
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			for _, v := range q[k] {
				if b.Len() > 0 {
					b.WriteByte('&')
				}
				b.WriteString(url.QueryEscape(k))
				b.WriteByte('=')
				if IsSecretParam(k) {
					b.WriteString(Marker) // literal, so it reads the same as elsewhere
				} else {
					b.WriteString(url.QueryEscape(v))
				}
			}
		}
		cp.RawQuery = b.String()
	}
	return cp.String()
}

// ShortSecret is the length under which a secret is replaced only where it
// stands whole: a token of a few characters occurs inside ordinary words
// ("x" in "exchange"), while a longer one does not occur in text by chance.
const ShortSecret = 8

// Redact replaces every secret in s, also in the URL-, form- and
// HTML-escaped forms a server may echo it in; a secret shorter than
// ShortSecret only where it stands whole, neither preceded nor followed by a
// letter, a digit, '-' or '_'. It reads s once, left to right, replacing the
// longest secret that starts at each position, so a short secret never
// matches inside a Marker it wrote, and a Marker already in s is kept whole
// unless a secret runs on past its end. Redact of its own output changes
// nothing.
func Redact(s string, secrets []string) string {
	forms := secretForms(s, secrets)
	if len(forms) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if n := longestAt(s, i, forms); n > 0 {
			b.WriteString(Marker)
			i += n
			continue
		}
		if strings.HasPrefix(s[i:], Marker) && !spillsPast(s, i, forms) {
			b.WriteString(Marker)
			i += len(Marker)
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// Replace replaces each occurrence of secret in s by with, where Redact
// would find it: anywhere for a secret of ShortSecret bytes or more, and
// where it stands whole for a shorter one.
func Replace(s, secret, with string) string {
	if secret == "" || !strings.Contains(s, secret) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], secret)
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		j += i
		b.WriteString(s[i:j])
		if standsAt(s, j, secret) {
			b.WriteString(with)
		} else {
			b.WriteString(secret)
		}
		i = j + len(secret)
	}
	return b.String()
}

// secretForms lists the forms of the secrets that occur in s.
func secretForms(s string, secrets []string) []string {
	var forms []string
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		for _, form := range [...]string{sec, url.QueryEscape(sec), url.PathEscape(sec), html.EscapeString(sec)} {
			if strings.Contains(s, form) {
				forms = append(forms, form)
			}
		}
	}
	return forms
}

// longestAt returns the length of the longest form that starts at s[i:].
func longestAt(s string, i int, forms []string) int {
	n := 0
	for _, f := range forms {
		if len(f) > n && standsAt(s, i, f) {
			n = len(f)
		}
	}
	return n
}

// standsAt reports whether form f is at s[i:] as a secret: anywhere when it
// is long, and as a whole token when it is short.
func standsAt(s string, i int, f string) bool {
	if !strings.HasPrefix(s[i:], f) {
		return false
	}
	end := i + len(f)
	return len(f) >= ShortSecret || (i == 0 || !tokenByte(s[i-1])) && (end == len(s) || !tokenByte(s[end]))
}

// tokenByte reports whether c can continue a token: a short secret next to
// one is part of a longer word.
func tokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// spillsPast reports whether a secret starts inside the Marker at s[i:]
// and ends after it: then the Marker is not ours to keep.
func spillsPast(s string, i int, forms []string) bool {
	end := i + len(Marker)
	for j := i + 1; j < end; j++ {
		for _, f := range forms {
			if j+len(f) > end && standsAt(s, j, f) {
				return true
			}
		}
	}
	return false
}

// MaxMessage bounds the server's part of an error's text, in bytes.
const MaxMessage = 300

// SafeText cleans s and replaces secrets in it, before and after cleaning:
// escaping a control character writes hex digits that could complete a
// secret the server split around it.
func SafeText(s string, secrets []string, max int) string {
	return Redact(CleanText(Redact(s, secrets), max), secrets)
}

// CleanText makes text from the server safe to print on one line: runs of
// white space (line breaks included) become one space, control and
// direction-changing characters and invalid UTF-8 are escaped, and the result
// is cut to about max bytes, with "…" marking the cut.
func CleanText(s string, max int) string {
	if isClean(s, max) {
		return s
	}
	var b strings.Builder
	space := false
	for i, r := range s {
		if b.Len() >= max {
			b.WriteString("…")
			break
		}
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				fmt.Fprintf(&b, `\x%02x`, s[i])
				space = false
				continue
			}
		}
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if UnsafeRune(r) {
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isClean reports whether CleanText would return s unchanged, the common case.
func isClean(s string, max int) bool {
	if len(s) > max || !utf8.ValidString(s) {
		return false
	}
	prevSpace := true
	for _, r := range s {
		sp := unicode.IsSpace(r)
		if (sp && (r != ' ' || prevSpace)) || UnsafeRune(r) {
			return false
		}
		prevSpace = sp
	}
	return !prevSpace || s == ""
}

// UnsafeRune reports control characters and those that reorder text on a
// terminal or a web page.
func UnsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// RedactedError is an error whose text has secrets replaced and is cleaned
// to one line, and which still unwraps to the original error.
type RedactedError struct {
	msg string
	err error
}

// Redacted wraps err so that its text hides secrets; nil stays nil.
func Redacted(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	return &RedactedError{msg: SafeText(err.Error(), secrets, MaxMessage), err: err}
}

func (e *RedactedError) Error() string { return e.msg }

// Unwrap returns the original error, whose own text is not cleaned.
func (e *RedactedError) Unwrap() error { return e.err }
