package cassette

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// ConformOptions configure Conform.
type ConformOptions struct {
	// Client sends the requests; nil means a client that does not follow
	// redirects, since a recording holds each hop as an exchange of its own.
	Client *http.Client
	// Token is sent as PRIVATE-TOKEN wherever the recorded request was
	// authenticated with a private token or an Authorization header.
	Token string
	// OAuth sends Token as an OAuth bearer token instead.
	OAuth bool
}

// conformHeaders are the answer headers Conform compares.
var conformHeaders = []string{"Content-Type", "Link", "X-Total", "X-Total-Pages"}

// Conform sends the requests of c, in order, to the server at target (a
// base URL without /api/v3: the fake, or any server) and returns where its
// answers differ from the recorded ones: the status, the Content-Type, Link
// and X-Total* headers, and the JSON body, leaf by leaf, named by JSON
// pointer. These rules compare what two servers cannot agree on:
//   - an id (a value under the key id, iid, sha, or a key ending in _id,
//     _ids or _sha) matches any value of the same JSON type; and where an
//     answer's "id" differs from the recorded one, the later requests are
//     sent with the target's id, in the route's path parameters and in the
//     id fields of queries and bodies (one map for every kind of object),
//     and the recorded Link URLs are read with the target's ids;
//   - two strings that both parse as RFC 3339 times match;
//   - runs of 16 or more hex digits inside strings (a commit, an upload's
//     directory) match any such run;
//   - a secret (see Recorder) matches any string, and each value it takes
//     in an answer is sent where the recorded requests used its placeholder,
//     so that a runner registered during the session can work; inside a
//     longer string (a clone URL), a placeholder stands for that value;
//   - the target's origin in the answer stands for RecordedOrigin, and a
//     secret sent in a query stands for its placeholder in the answer's
//     headers, as the recorder writes them.
//
// Webhook deliveries are skipped. An error is returned only when a request
// cannot be sent; the differences found until then are returned with it.
func Conform(ctx context.Context, c *Cassette, target string, opts ConformOptions) ([]Difference, error) {
	base, err := url.Parse(strings.TrimSuffix(target, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("cassette: conform: target %q is not an absolute URL", target)
	}
	cf := conformer{opts: opts, base: base, learned: map[string]string{}, sent: map[string]string{}, ids: map[string]string{}}
	if cf.opts.Client == nil {
		cf.opts.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	var all []Difference
	for i := range c.Exchanges {
		e := &c.Exchanges[i]
		if e.Kind != "" {
			continue
		}
		diffs, err := cf.exchange(ctx, e)
		for _, d := range diffs {
			d.Exchange, d.Route = i, e.Route
			all = append(all, d)
		}
		if err != nil {
			return all, fmt.Errorf("cassette: conform: #%d %s: %w", i, e.Route, err)
		}
	}
	return all, nil
}

// conformer replays one cassette's requests.
type conformer struct {
	opts    ConformOptions
	base    *url.URL
	learned map[string]string // placeholder -> the secret the target gave
	sent    map[string]string // placeholder -> the secret sent in its place in a query
	ids     map[string]string // recorded id -> the target's id for the same object
}

// exchange sends e's request and compares the answer.
func (cf *conformer) exchange(ctx context.Context, e *Exchange) ([]Difference, error) {
	req, err := cf.request(ctx, e)
	if err != nil {
		return nil, err
	}
	resp, err := cf.opts.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	origin := cf.base.Scheme + "://" + cf.base.Host
	var got Message
	got.Header = resp.Header
	got.setBody([]byte(toRecorded(string(body), origin)))
	return cf.compare(e, resp.StatusCode, got, origin), nil
}

// request rebuilds e's request for the target: secrets put back, and the
// target's ids in place of the recorded ones, in the path's parameters and
// in the id fields of the query and the body.
func (cf *conformer) request(ctx context.Context, e *Exchange) (*http.Request, error) {
	raw := strings.TrimSuffix(cf.base.String(), "/") + cf.path(e)
	if q := cf.values(e.Query); len(q) > 0 {
		raw += "?" + q.Encode()
	}
	body := e.Request.Body()
	switch mt := e.Request.mediaType(); {
	case mt == "application/x-www-form-urlencoded":
		if v, err := url.ParseQuery(string(body)); err == nil {
			body = []byte(cf.values(v).Encode())
		}
	case e.Request.JSON != nil:
		if v, err := decodeJSON([]byte(cf.subst(string(body)))); err == nil {
			body = encodeJSON(cf.jsonIDs("", v))
		}
	default:
		body = []byte(cf.subst(string(body)))
	}
	req, err := http.NewRequestWithContext(ctx, e.Method, raw, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	cf.headers(req, e.Request.Header)
	return req, nil
}

// path is e's path with the target's ids in the segments that its route
// names as parameters.
func (cf *conformer) path(e *Exchange) string {
	_, tmpl, _ := strings.Cut(e.Route, " ")
	names, segs := strings.Split(tmpl, "/"), strings.Split(e.Path, "/")
	if len(names) != len(segs) {
		return e.Path
	}
	for i, n := range names {
		if id, ok := cf.ids[segs[i]]; ok && strings.HasPrefix(n, ":") {
			segs[i] = id
		}
	}
	return strings.Join(segs, "/")
}

// values returns v with secrets put back and ids mapped. A token the
// recorded request sent as a parameter becomes the user's token.
func (cf *conformer) values(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		for _, s := range vs {
			if id, ok := cf.ids[s]; ok && isIDKey(k) {
				s = id
			}
			recorded := s
			s = cf.subst(s)
			if (k == "private_token" || k == "access_token") && isPlaceholder(s) && cf.opts.Token != "" {
				s = cf.opts.Token
			}
			if isSecretKey(k) && isPlaceholder(recorded) && s != recorded {
				keepFirst(cf.sent, recorded, s)
			}
			out.Add(k, s)
		}
	}
	return out
}

// jsonIDs maps the ids in a decoded JSON body, found under key.
func (cf *conformer) jsonIDs(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = cf.jsonIDs(k, e)
		}
	case []any:
		for i, e := range v {
			v[i] = cf.jsonIDs(key, e)
		}
	case json.Number:
		if id, ok := cf.ids[v.String()]; ok && isIDKey(key) {
			return json.Number(id)
		}
	}
	return v
}

// headers copies the recorded request headers, the user's token in place of
// the recorded credentials; SUDO, whose value is not known, is left out.
func (cf *conformer) headers(req *http.Request, recorded http.Header) {
	authed := false
	for k, vs := range recorded {
		switch http.CanonicalHeaderKey(k) {
		case "Private-Token", "Authorization":
			authed = true
		case "Sudo":
		default:
			for _, v := range vs {
				req.Header.Add(k, cf.subst(v))
			}
		}
	}
	switch {
	case !authed || cf.opts.Token == "":
	case cf.opts.OAuth:
		req.Header.Set("Authorization", "Bearer "+cf.opts.Token)
	default:
		req.Header.Set("PRIVATE-TOKEN", cf.opts.Token)
	}
}

// subst puts the learned secrets in place of their placeholders in s.
func (cf *conformer) subst(s string) string {
	if !strings.Contains(s, placeholderPrefix) {
		return s
	}
	for p, v := range cf.learned {
		s = strings.ReplaceAll(s, p, v)
	}
	return s
}

// compare lists how the answer got differs from e's, and learns the secrets
// it holds.
func (cf *conformer) compare(e *Exchange, status int, got Message, origin string) []Difference {
	var diffs []Difference
	if status != e.Status {
		diffs = append(diffs, Difference{Part: "status", Recorded: fmt.Sprint(e.Status), Got: fmt.Sprint(status)})
	}
	for _, k := range conformHeaders {
		a := cf.linkIDs(e.Response.Header.Get(k))
		b := toRecorded(got.Header.Get(k), origin)
		for p, v := range cf.sent { // as the recorder hid them
			b = hideInURL(b, v, p)
		}
		if a != b {
			diffs = append(diffs, Difference{Part: "header " + k, Recorded: showHeader(a), Got: showHeader(b)})
		}
	}
	recorded := bodyValue(e.Response.mediaType(), "", e.Response.Body())
	answer := bodyValue(got.mediaType(), "", got.Body())
	cf.learn("", recorded, answer)
	d := differ{loose: true, subst: cf.subst}
	d.value("", "", recorded, answer)
	return append(diffs, d.found...)
}

func showHeader(v string) string {
	if v == "" {
		return missing
	}
	return show(v)
}

// learn walks a recorded and a received answer side by side, found under
// key, and keeps the secret that stands where the recorded one has a
// placeholder, and the id the target gave an object the recording saw.
func (cf *conformer) learn(key string, recorded, got any) {
	switch r := recorded.(type) {
	case string:
		if s, ok := got.(string); ok && isPlaceholder(r) && !isPlaceholder(s) {
			keepFirst(cf.learned, r, s)
		}
	case json.Number:
		if g, ok := got.(json.Number); ok && key == "id" {
			keepFirst(cf.ids, r.String(), g.String())
		}
	case map[string]any:
		if g, ok := got.(map[string]any); ok {
			for k, v := range r {
				cf.learn(k, v, g[k])
			}
		}
	case []any:
		if g, ok := got.([]any); ok {
			for i := range min(len(r), len(g)) {
				cf.learn(key, r[i], g[i])
			}
		}
	}
}

// idSegment is a path segment of digits in a URL.
var idSegment = regexp.MustCompile(`/[0-9]+\b`)

// linkIDs puts the target's ids in the path segments of the URLs of a
// recorded header, so that a Link compares with the target's.
func (cf *conformer) linkIDs(h string) string {
	return idSegment.ReplaceAllStringFunc(h, func(seg string) string {
		if id, ok := cf.ids[seg[1:]]; ok {
			return "/" + id
		}
		return seg
	})
}

// keepFirst sets m[k] to v unless m has k already.
func keepFirst(m map[string]string, k, v string) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}
