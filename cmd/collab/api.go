package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/collabsvc/collab"
)

// apiCmd holds the flags of collab api.
type apiCmd struct {
	cfg *config
	std stdio

	method    string
	fields    []fieldArg // -f and -F, in the order given
	input     string
	headers   []string
	sudo      string
	include   bool
	paginate  bool
	prefetch  int
	jq        string
	ndjson    bool
	runnerAPI bool
	rate      float64
}

func newAPICmd(cfg *config, std stdio) *cobra.Command {
	a := &apiCmd{cfg: cfg, std: std}
	cmd := leafCmd(cmdText{
		use:   "api [METHOD] PATH",
		short: "Call any endpoint of the API",
		long: `Call any endpoint of the API under /api/v3 (or /ci/api/v1 with --runner) and print
the response body.

:project in the path stands for the project of -R, $COLLAB_REPO or the current
directory's git remote, and :branch for the branch checked out there, each escaped; a
project path given whole (projects/acme/webshop/issues) is escaped too. Issues and merge requests are addressed by their global id here;
the typed commands (collab issue view 5) take the number people see.

-f key=value sends a string and -F key=value a typed value: a number, true, false,
null, or @FILE for a file's contents (@- for standard input). A key ending in []
builds an array. Parameters go in the query string for GET, HEAD and DELETE, and
in a JSON body otherwise. The method is GET, or POST when parameters are given
without --paginate.

--paginate follows every page and prints one JSON array of all items, so --jq
sees the whole list: "collab api --paginate projects/1/issues --jq length" prints
one number. --ndjson prints one item per line as it arrives instead, holding only
a page in memory; --jq then applies to each item.

--rate N sends at most N requests a second (pages and retries included), and
any 429 or 503 with Retry-After pauses every request until the wait is over.

An error status exits 1 with a one-line error on stderr. A write is never sent
twice by a retry.`,
		example: `  collab api projects/1/issues --paginate --jq 'map(.title)'
  collab api -R acme/webshop projects/:project/labels
  collab api POST projects/1/issues -f title='Crash on save' -F confidential=true
  collab api -X PUT projects/1/issues/3 -f state_event=close -i
  collab api --paginate --ndjson projects/1/issues --jq .iid
  collab api --paginate --rate 5 projects/1/issues --jq length`,
	}, rangeArgs(1, 2), a.run)
	f := cmd.Flags()
	f.StringVarP(&a.method, "method", "X", "", "HTTP `METHOD` (default GET, or POST with parameters)")
	f.VarP(fieldFlag{&a.fields, false}, "raw-field", "f", "add a string parameter `key=value`")
	f.VarP(fieldFlag{&a.fields, true}, "field", "F", "add a typed parameter `key=value` (number, true, false, null, @file)")
	f.StringVar(&a.input, "input", "", "send the body from `FILE` (- for standard input); parameters then go in the query")
	f.StringArrayVarP(&a.headers, "header", "H", nil, "add a request header `\"Key: value\"`")
	f.StringVar(&a.sudo, "sudo", "", "act as `USER` (an id or username; needs an administrator's token)")
	f.BoolVarP(&a.include, "include", "i", false, "print the status and headers of each response on stderr, tokens redacted")
	f.BoolVar(&a.paginate, "paginate", false, "follow every page and print one JSON array of all items (GET only)")
	f.IntVar(&a.prefetch, "prefetch", 8, "with --paginate, fetch up to `N` pages concurrently (1: one at a time)")
	f.StringVarP(&a.jq, "jq", "q", "", "filter the output with a jq `EXPRESSION` (strings print without quotes)")
	f.BoolVar(&a.ndjson, "ndjson", false, "print each item of a list as one line of JSON")
	f.BoolVar(&a.runnerAPI, "runner", false, "call the runner API (/ci/api/v1) instead of /api/v3")
	f.Float64Var(&a.rate, "rate", 0, "send at most `N` requests per second (0: no limit)")
	f.StringVarP(&cfg.repo, projectFlag, "R", "", "the project `GROUP/PROJECT` that :project stands for (default $COLLAB_REPO, else the git remote)")
	return cmd
}

func (a *apiCmd) run(ctx context.Context, args []string) error {
	method, path, fields, err := a.request(args)
	if err != nil {
		return err
	}
	if path, err = a.fillProject(ctx, path); err != nil {
		return err
	}
	headers, err := parseHeaders(a.headers)
	if err != nil {
		return err
	}
	filter, err := compileJQ(a.jq)
	if err != nil {
		return err
	}
	watch := newWatcher(headers)
	client, err := a.client(watch)
	if err != nil {
		return err
	}
	defer watch.CloseIdleConnections() // the client leaves a transport it was given alone

	out := bufio.NewWriterSize(a.std.out, 64<<10)
	w := &output{w: out, filter: filter, ndjson: a.ndjson}
	if a.paginate {
		err = a.paginateAll(ctx, client, encodeQuery(path, fields), w, watch)
	} else {
		err = a.once(ctx, client, method, path, fields, w)
	}
	if ferr := out.Flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		return apiError{err: err, impliedPost: a.method == "" && len(args) == 1 && method == http.MethodPost}
	}
	return nil
}

// request reads the method, path and parameters, and checks the flags
// that go with them.
func (a *apiCmd) request(args []string) (method, path string, fields []field, err error) {
	method, path, err = a.target(args)
	if err != nil {
		return "", "", nil, err
	}
	fields, err = parseFields(a.fields, a.std.in, a.input == "-")
	if err != nil {
		return "", "", nil, err
	}
	if a.method == "" && len(args) == 1 && !a.paginate && (len(fields) > 0 || a.input != "") {
		method = http.MethodPost
	}
	switch {
	case a.paginate && method != http.MethodGet:
		return "", "", nil, usagef("--paginate needs GET, not %s", method)
	case a.paginate && a.input != "":
		return "", "", nil, usagef("--input cannot be used with --paginate")
	case a.prefetch < 1:
		return "", "", nil, usagef("--prefetch must be at least 1")
	case a.rate < 0 || math.IsNaN(a.rate) || math.IsInf(a.rate, 0):
		return "", "", nil, usagef("--rate must be a number of requests per second, 0 for no limit")
	}
	return method, path, fields, nil
}

// client builds the SDK client on the SDK's own transport (its timeouts and
// connection pool) wrapped by watch, with the --runner, --sudo, --rate and
// --include settings.
func (a *apiCmd) client(watch *watcher) (*collab.Client, error) {
	apiPath := "api/v3"
	if a.runnerAPI {
		apiPath = "ci/api/v1"
	}
	var extra []collab.ClientOption
	if a.rate > 0 {
		extra = append(extra, collab.WithRateLimit(a.rate, 1))
	}
	client, token, err := a.cfg.client(apiPath, &http.Client{Transport: watch}, extra...)
	if err != nil {
		return nil, err
	}
	if a.sudo != "" {
		client = client.Sudo(a.sudo)
	}
	if a.include {
		watch.onResponse = includePrinter(a.std.err, token)
	}
	return client, nil
}

// fillProject puts the project in place of :project and the current git
// branch in place of :branch, each escaped, and escapes a project path
// given whole (projects/acme/webshop/issues).
func (a *apiCmd) fillProject(ctx context.Context, path string) (string, error) {
	fills := map[string]func(context.Context) (string, error){":project": a.cfg.project, ":branch": currentBranch}
	segments := strings.Split(path, "/")
	for i, s := range segments {
		name, _, _ := strings.Cut(s, "?")
		fill, ok := fills[name]
		if !ok {
			continue
		}
		v, err := fill(ctx)
		if err != nil {
			return "", err
		}
		segments[i] = escapeSegment(v) + strings.TrimPrefix(s, name)
	}
	return escapeProjectPath(strings.Join(segments, "/")), nil
}

// target reads [METHOD] PATH and -X.
func (a *apiCmd) target(args []string) (method, path string, err error) {
	path = args[len(args)-1]
	method = http.MethodGet
	if len(args) == 2 {
		if a.method != "" {
			return "", "", usagef("give the method once: as an argument or with -X")
		}
		method = args[0]
	} else if a.method != "" {
		method = a.method
	}
	method = strings.ToUpper(method)
	if method == "" || strings.ContainsAny(method, " \t/") {
		return "", "", usagef("bad method %q", method)
	}
	path = strings.TrimPrefix(path, "/")
	if path == "" {
		return "", "", usagef("the path is empty")
	}
	return method, path, nil
}

// once sends one request and prints its body.
func (a *apiCmd) once(ctx context.Context, client *collab.Client, method, path string, fields []field, w *output) error {
	var body []byte
	contentType := ""
	switch {
	case a.input != "":
		b, err := a.readInput()
		if err != nil {
			return err
		}
		body, contentType = b, "application/json"
		path = encodeQuery(path, fields)
	case len(fields) == 0:
	case method == http.MethodGet || method == http.MethodHead || method == http.MethodDelete:
		path = encodeQuery(path, fields)
	default:
		b, err := encodeJSON(fields)
		if err != nil {
			return err
		}
		body, contentType = b, "application/json"
	}
	var opt any
	if body != nil {
		// A bytes.Reader can be rewound, so a retry the policy allows
		// resends the same body.
		opt = bytes.NewReader(body)
	}
	req, err := client.NewRequest(ctx, method, path, opt)
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.BareDo(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return w.document(resp.Body)
}

func (a *apiCmd) readInput() ([]byte, error) {
	var b []byte
	var err error
	if a.input == "-" {
		b, err = io.ReadAll(a.std.in)
	} else {
		b, err = os.ReadFile(a.input)
	}
	if err != nil {
		return nil, usagef("--input: %v", err)
	}
	return b, nil
}

// paginateAll prints every item of the list at path.
func (a *apiCmd) paginateAll(ctx context.Context, client *collab.Client, path string, w *output, watch *watcher) error {
	prog := newProgress(a.std.err, watch)
	defer prog.done()
	if err := w.begin(); err != nil {
		return err
	}
	for item, err := range client.AllRaw(ctx, path, collab.Prefetch(a.prefetch)) {
		if err != nil {
			return err
		}
		if err := w.item(item); err != nil {
			return err
		}
		prog.item()
	}
	return w.end()
}

// parseHeaders reads -H "Key: value" lines.
func parseHeaders(lines []string) (http.Header, error) {
	h := http.Header{}
	for _, l := range lines {
		k, v, ok := strings.Cut(l, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") || strings.ContainsAny(v, "\r\n") {
			return nil, usagef("header %q: want \"Key: value\"", l)
		}
		h.Add(k, strings.TrimSpace(v))
	}
	return h, nil
}

// watcher adds the -H headers to every request, of one call or of every
// page, and sees every response, for the page count and -i.
type watcher struct {
	next       http.RoundTripper
	header     http.Header // from -H; each replaces what the SDK set
	onResponse func(*http.Response)
	pages      atomic.Int64
}

// newWatcher wraps the SDK's own transport (its response-header timeout and
// connection pool), adding headers to every request.
func newWatcher(headers http.Header) *watcher {
	return &watcher{next: collab.NewTransport(), header: headers}
}

// CloseIdleConnections closes the idle connections of the transport
// underneath.
func (w *watcher) CloseIdleConnections() {
	if c, ok := w.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// RoundTrip implements http.RoundTripper.
func (w *watcher) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(w.header) > 0 {
		req = req.Clone(req.Context()) // a RoundTripper must not change its request
		for k, vs := range w.header {
			req.Header[k] = vs
		}
	}
	resp, err := w.next.RoundTrip(req)
	if err == nil {
		w.pages.Add(1)
		if w.onResponse != nil {
			w.onResponse(resp)
		}
	}
	return resp, err
}

// includePrinter prints a response's status line and headers, with the
// token replaced wherever the server echoed it.
func includePrinter(errOut io.Writer, token string) func(*http.Response) {
	var mu sync.Mutex // prefetched pages answer concurrently
	return func(resp *http.Response) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", resp.Proto, resp.Status)
		keys := slices.Sorted(maps.Keys(resp.Header))
		for _, k := range keys {
			for _, v := range resp.Header[k] {
				fmt.Fprintf(&b, "%s: %s\n", k, v)
			}
		}
		b.WriteString("\n")
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(errOut, collab.Secret(token).Redact(b.String()))
	}
}
