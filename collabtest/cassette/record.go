package cassette

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"

	"github.com/collabsvc/collab/collabtest"
	"github.com/collabsvc/collab/internal/wire"
)

// A Recorder records exchanges with a server into a Cassette, through a
// transport for a client (Transport) or as a reverse proxy (Handler).
//
// What it writes is normalized so that a cassette holds no secret and
// compares well with another:
//   - the values of the credential headers (PRIVATE-TOKEN, Authorization
//     and Proxy-Authorization after their scheme, SUDO, BUILD-TOKEN,
//     JOB-TOKEN, Cookie) and of the webhook's X-Gitlab-Token, and of the
//     credential keys in queries, forms and JSON bodies (at any depth, in
//     requests and answers), become placeholders "<secret-N>", the same N
//     for the same secret. The keys are the SDK's credential parameters
//     (private_token, access_token, token, build_token, runner_token,
//     job_token, password) and the key of every credential field of its
//     records (private_token, runners_token, a runner's and a build's
//     token), so that a record that gains one is covered;
//   - each credential hidden so far (not a SUDO user's name) becomes its
//     placeholder wherever later text repeats it, as written, query- or
//     path-escaped: a build token inside a clone URL, a token an error
//     quotes, a query's token in the Link URLs (there query-escaped). One
//     shorter than 8 bytes is replaced only where it stands whole;
//   - an answer sent with gzip Content-Encoding is stored decompressed;
//   - a JSON body that held a secret is written with its keys sorted;
//   - the recorded server's scheme and host become RecordedOrigin, and its
//     host after user info ("user:token@host") becomes RecordedOrigin's;
//   - of the request headers, only Content-Type, Accept, X-Gitlab-Event and
//     the authentication headers are kept; of the answer's, Content-Type,
//     Content-Disposition, Link, Location, Retry-After and every X- header.
//
// A request that carries X-Gitlab-Event is recorded as a webhook delivery
// (Kind DeliveryKind). A Recorder is safe for concurrent use; exchanges are
// kept in the order their answers arrived.
type Recorder struct {
	red       redactor
	mu        sync.Mutex
	exchanges []Exchange
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{} }

// Cassette returns what was recorded so far.
func (rec *Recorder) Cassette() *Cassette {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return &Cassette{Format: Format, Version: Version, Exchanges: append([]Exchange(nil), rec.exchanges...)}
}

// Transport returns a RoundTripper that sends each request through next
// (http.DefaultTransport when nil) and records it with its answer. A request
// that gets no answer is not recorded.
func (rec *Recorder) Transport(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &recordingTransport{rec: rec, next: next}
}

// Handler returns a reverse proxy that sends each request to upstream, a
// base URL such as "https://collab.example.com", and records it: the API
// server's, or a webhook receiver's to record deliveries.
func (rec *Recorder) Handler(upstream string) (http.Handler, error) {
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("cassette: upstream %q: want an http:// or https:// URL", upstream)
	}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			// The transport then asks for compression itself and hands
			// back the plain body, which is what the cassette keeps.
			pr.Out.Header.Del("Accept-Encoding")
		},
		Transport: rec.Transport(nil),
	}, nil
}

// recordingTransport is the RoundTripper of Recorder.Transport.
type recordingTransport struct {
	rec  *Recorder
	next http.RoundTripper
}

// RoundTrip sends req through the next transport and records the exchange.
func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	reqBody, err := readBody(req.Body)
	if err != nil {
		return nil, err
	}
	out := req // the caller's request is not changed: a copy carries the bytes read
	if req.Body != nil && req.Body != http.NoBody {
		out = req.Clone(req.Context())
		out.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	respBody, err := readBody(resp.Body)
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	t.rec.add(req, reqBody, resp, respBody)
	return resp, nil
}

// routeName names r by its route template (see Exchange.Route), or by its
// method and path when no route of the API serves it.
func routeName(r *http.Request) string {
	if route := collabtest.Route(r); route != "" {
		return route
	}
	return r.Method + " " + r.URL.EscapedPath()
}

// readBody reads body whole, if there is one, and closes it.
func readBody(body io.ReadCloser) ([]byte, error) {
	if body == nil || body == http.NoBody {
		return nil, nil
	}
	defer body.Close()
	return io.ReadAll(body)
}

// cassetteBoundary replaces the random boundary of a multipart body, so
// that recording the same request twice writes the same text.
const cassetteBoundary = "collab-cassette-boundary"

// stableBoundary puts cassetteBoundary in place of the boundary of a
// multipart body and in its recorded Content-Type, when the body does not
// hold the stable boundary already.
func stableBoundary(h http.Header, body []byte) []byte {
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	b := params["boundary"]
	if err != nil || !strings.HasPrefix(mt, "multipart/") || b == "" || bytes.Contains(body, []byte(cassetteBoundary)) {
		return body
	}
	params["boundary"] = cassetteBoundary
	h.Set("Content-Type", mime.FormatMediaType(mt, params))
	return bytes.ReplaceAll(body, []byte("--"+b), []byte("--"+cassetteBoundary))
}

// add records one exchange, normalized.
func (rec *Recorder) add(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	red := &rec.red
	origin := req.URL.Scheme + "://" + req.URL.Host
	e := Exchange{Route: routeName(req), Method: req.Method, Path: req.URL.EscapedPath(), Status: resp.StatusCode}
	if ev := req.Header.Get("X-Gitlab-Event"); ev != "" {
		e.Kind, e.Route = DeliveryKind, "DELIVERY "+ev
	}
	// The request's credentials, not its SUDO user, as the SDK lists them;
	// the body is not read again (its secrets are hidden by key below).
	noBody := *req
	noBody.GetBody = nil
	for _, sec := range wire.RequestSecrets(&noBody) {
		red.hide(sec)
	}
	if q := req.URL.Query(); len(q) > 0 {
		red.values(q)
		e.Query = q
	}
	e.Request.Header = red.header(req.Header, keptRequestHeaders, false)
	body := red.body(req.Header.Get("Content-Type"), stableBoundary(e.Request.Header, reqBody))
	e.Request.setBody(red.everywhere(body))

	e.Response.Header = red.header(resp.Header, keptResponseHeaders, true)
	body = red.body(resp.Header.Get("Content-Type"), []byte(toRecorded(string(decoded(resp.Header, respBody)), origin)))
	e.Response.setBody(red.everywhere(body))
	for k, vs := range e.Response.Header {
		for i, v := range vs {
			e.Response.Header[k][i] = red.inHeader(toRecorded(v, origin))
		}
	}
	rec.mu.Lock()
	rec.exchanges = append(rec.exchanges, e)
	rec.mu.Unlock()
}

// decoded returns an answer's body without its gzip Content-Encoding (a
// client that asks for gzip itself gets the body compressed), so that the
// cassette holds what the server said, secrets hidden; a body that does not
// decompress is kept out.
func decoded(h http.Header, body []byte) []byte {
	switch strings.ToLower(h.Get("Content-Encoding")) {
	case "":
		return body
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err == nil {
			if plain, err := io.ReadAll(zr); err == nil {
				return plain
			}
		}
	}
	return nil
}
