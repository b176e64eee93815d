package cassette

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/collabsvc/collab/internal/wire"
)

// RecordedOrigin stands, in a cassette, for the scheme and host of the
// server that was recorded, wherever its answers name it (Link and Location
// headers, URLs in bodies). A replay puts its own origin back.
const RecordedOrigin = "http://recorded.invalid"

// secretHeaders carry credentials, or act as a user, as the SDK knows them,
// and the webhook's secret token; their values are never recorded.
var secretHeaders = append(slices.Clone(wire.CredentialHeaders), "X-Gitlab-Token")

// isSecretKey reports whether a query, form or JSON key (at any depth)
// holds a secret: a credential parameter the SDK knows, or runners_token,
// a project's runner registration token in its answers.
func isSecretKey(key string) bool { return wire.IsSecretParam(key) || key == "runners_token" }

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
// request used.
type redactor struct {
	mu    sync.Mutex
	names map[string]string // secret -> its placeholder
	taken map[string]bool   // placeholders given
}

func (r *redactor) hide(secret string) string {
	if secret == "" {
		return secret
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.names == nil {
		r.names, r.taken = map[string]string{}, map[string]bool{}
	}
	p, ok := r.names[secret]
	if ok {
		return p
	}
	// A placeholder that comes back (a replayed answer's token, sent again)
	// stands for itself, and its number is not given to another secret.
	p = secret
	for n := len(r.names) + 1; !isPlaceholder(p) || r.taken[p]; n++ {
		p = placeholderPrefix + strconv.Itoa(n) + ">"
	}
	r.names[secret], r.taken[p] = p, true
	return p
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
			out.Add(k, scheme+r.hide(secret))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// text replaces each of secrets in s, a header of an answer, by its
// placeholder: a server echoes a query's token in the Link and Location
// URLs it answers with.
func (r *redactor) text(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" && (strings.Contains(s, sec) || strings.Contains(s, url.QueryEscape(sec))) {
			s = hideInURL(s, sec, r.hide(sec))
		}
	}
	return s
}

// minEchoed is the shortest credential echoes looks for: replacing a
// shorter string wherever it appears would change unrelated text.
const minEchoed = 8

// echoes replaces each of secrets, the request's credentials, wherever an
// answer's body repeats it, under whatever key (an error message quoting
// the token, say), by its placeholder.
func (r *redactor) echoes(b []byte, secrets []string) []byte {
	for _, sec := range secrets {
		if len(sec) >= minEchoed && bytes.Contains(b, []byte(sec)) {
			b = bytes.ReplaceAll(b, []byte(sec), []byte(r.hide(sec)))
		}
	}
	return b
}

// hideInURL replaces secret in s, as written and query-escaped, by the
// query-escaped placeholder, which a URL in a header can hold.
func hideInURL(s, secret, placeholder string) string {
	p := url.QueryEscape(placeholder)
	return strings.ReplaceAll(strings.ReplaceAll(s, secret, p), url.QueryEscape(secret), p)
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
// any depth, and secret fields of a form. Other bodies are kept as they are.
func (r *redactor) body(mediaType string, b []byte) []byte {
	switch {
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
