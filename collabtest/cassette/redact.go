package cassette

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/collabsvc/collab/internal/secretkeys"
	"github.com/collabsvc/collab/internal/wire"
)

// RecordedOrigin stands, in a cassette, for the scheme and host of the
// server that was recorded, wherever its answers name it (Link and Location
// headers, URLs in bodies). A replay puts its own origin back.
const RecordedOrigin = "http://recorded.invalid"

// recordedHost is RecordedOrigin's host, which also stands for the host of a
// URL with user info ("http://gitlab-ci-token:<secret-1>@recorded.invalid").
const recordedHost = "recorded.invalid"

// toRecorded writes the origin of s, a server's scheme and host, as the
// cassette does: RecordedOrigin, or recordedHost after user info.
func toRecorded(s, origin string) string {
	_, host, _ := strings.Cut(origin, "://")
	return strings.ReplaceAll(strings.ReplaceAll(s, origin, RecordedOrigin), "@"+host, "@"+recordedHost)
}

// fromRecorded puts origin back where toRecorded wrote it.
func fromRecorded(s, origin string) string {
	_, host, _ := strings.Cut(origin, "://")
	return strings.ReplaceAll(strings.ReplaceAll(s, RecordedOrigin, origin), "@"+recordedHost, "@"+host)
}

// secretHeaders carry credentials, or act as a user, as the SDK knows them,
// and the webhook's secret token; their values are never recorded.
var secretHeaders = append(slices.Clone(wire.CredentialHeaders), "X-Gitlab-Token")

// secretKeys are the query, form and JSON keys that hold a secret: the
// credential parameters the SDK sends (the runner's tokens among them) and
// the key of every Secret field of the SDK's records, found by reflection,
// so that a record that gains a credential is hidden with no edit here.
var secretKeys = sync.OnceValue(func() []string {
	keys := slices.Concat(wire.SecretParams, secretkeys.Keys())
	slices.Sort(keys)
	return slices.Compact(keys)
})

// isSecretKey reports whether a query, form or JSON key (at any depth)
// holds a secret.
func isSecretKey(key string) bool { return containsFold(secretKeys(), key) }

// keptRequestHeaders are recorded besides the secret ones.
var keptRequestHeaders = []string{"Content-Type", "Accept", "X-Gitlab-Event"}

// keptResponseHeaders are recorded besides every X- header.
var keptResponseHeaders = []string{"Content-Type", "Content-Disposition", "Link", "Location", "Retry-After"}

// placeholderPrefix starts every placeholder: "<secret-1>", "<secret-2>"...
const placeholderPrefix = "<secret-"

// isPlaceholder reports whether s is a placeholder a redactor made.
func isPlaceholder(s string) bool {
	return strings.HasPrefix(s, placeholderPrefix) && strings.HasSuffix(s, ">")
}

// A redactor replaces each secret by a placeholder, the same one wherever
// the same secret appears, so that a reader still sees which token a
// request used. The credentials it has hidden (not a SUDO user's name) are
// then hidden wherever any later text repeats them.
type redactor struct {
	mu    sync.Mutex
	names map[string]string // secret -> its placeholder
	taken map[string]bool   // placeholders given
	known []string          // credentials hidden so far, to hide everywhere
}

// hide returns the placeholder of a credential, and hides it in the text
// recorded from then on.
func (r *redactor) hide(secret string) string { return r.name(secret, true) }

// name returns secret's placeholder; a credential is also kept in known.
func (r *redactor) name(secret string, credential bool) string {
	if secret == "" {
		return secret
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.names == nil {
		r.names, r.taken = map[string]string{}, map[string]bool{}
	}
	p, ok := r.names[secret]
	if !ok {
		// A placeholder that comes back (a replayed answer's token, sent
		// again) stands for itself, and its number is not given to another
		// secret.
		p = secret
		for n := len(r.names) + 1; !isPlaceholder(p) || r.taken[p]; n++ {
			p = placeholderPrefix + strconv.Itoa(n) + ">"
		}
		r.names[secret], r.taken[p] = p, true
	}
	if credential && !isPlaceholder(secret) && !slices.Contains(r.known, secret) {
		r.known = append(r.known, secret)
	}
	return p
}

// everywhere replaces each credential hidden so far, as written, query-
// and path-escaped, wherever b holds it (a build token inside a clone
// URL, a token an error quotes), by its placeholder in the same form. A
// short credential is replaced only where it stands whole.
func (r *redactor) everywhere(b []byte) []byte {
	s := string(b)
	for _, sec := range r.credentials() {
		p := r.hide(sec)
		s = wire.Replace(s, sec, p)
		for _, esc := range [...]func(string) string{url.QueryEscape, url.PathEscape} {
			if e := esc(sec); e != sec {
				s = wire.Replace(s, e, esc(p))
			}
		}
	}
	return []byte(s)
}

// inHeader replaces each credential hidden so far in v, an answer's
// header, by its query-escaped placeholder, which the URL of a Link or a
// Location header can hold.
func (r *redactor) inHeader(v string) string {
	for _, sec := range r.credentials() {
		v = hideInURL(v, sec, r.hide(sec))
	}
	return v
}

// credentials returns the credentials hidden so far.
func (r *redactor) credentials() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.known)
}

// header returns the headers of h worth recording, secrets hidden. An
// Authorization value keeps its scheme ("Bearer <secret-1>").
func (r *redactor) header(h http.Header, kept []string, allX bool) http.Header {
	out := http.Header{}
	for k, vs := range h {
		if (allX && strings.HasPrefix(k, "X-") || containsFold(kept, k)) && !containsFold(secretHeaders, k) {
			out[k] = append([]string(nil), vs...)
		}
	}
	for _, k := range secretHeaders {
		for _, v := range h.Values(k) {
			scheme, secret, ok := strings.Cut(v, " ")
			if !ok || !strings.HasSuffix(k, "Authorization") {
				scheme, secret = "", v
			} else {
				scheme += " "
			}
			out.Add(k, scheme+r.name(secret, !strings.EqualFold(k, "SUDO")))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// hideInURL replaces secret in s, as written and query-escaped, by the
// query-escaped placeholder, as the recorder hides a query's token that a
// Link URL repeats.
func hideInURL(s, secret, placeholder string) string {
	p := url.QueryEscape(placeholder)
	return wire.Replace(wire.Replace(s, secret, p), url.QueryEscape(secret), p)
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// values hides the secrets of a query or a form, in place.
func (r *redactor) values(v url.Values) {
	for k, vs := range v {
		if isSecretKey(k) {
			for i := range vs {
				vs[i] = r.hide(vs[i])
			}
		}
	}
}

// body returns b with its secrets hidden: JSON values under a secret key at
// any depth, and secret fields of a form; those of a multipart form are
// learned, for everywhere to hide. Other bodies are kept as they are.
func (r *redactor) body(contentType string, b []byte) []byte {
	mediaType, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mediaType == "multipart/form-data":
		fields, _ := multipartObject(contentType, b) // what parsed, even if the end did not
		for k, v := range fields {
			if s, ok := v.(string); ok && isSecretKey(k) {
				r.hide(s)
			}
		}
		return b
	case mediaType == "application/x-www-form-urlencoded":
		v, err := url.ParseQuery(string(b))
		if err != nil {
			return b
		}
		r.values(v)
		return []byte(v.Encode())
	case json.Valid(b):
		v, err := decodeJSON(b)
		if err != nil || !r.walk(v) {
			return b
		}
		return encodeJSON(v)
	}
	return b
}

// walk hides the secrets in a decoded JSON value and reports whether it
// found any.
func (r *redactor) walk(v any) bool {
	found := false
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && isSecretKey(k) && s != "" {
				v[k] = r.hide(s)
				found = true
			} else if r.walk(e) {
				found = true
			}
		}
	case []any:
		for _, e := range v {
			if r.walk(e) {
				found = true
			}
		}
	}
	return found
}

// decodeJSON decodes b keeping numbers as written.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// encodeJSON encodes v compactly, keys sorted, without HTML escapes.
func encodeJSON(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // v came from decodeJSON: it encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
