package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/cmd/collab/internal/ops"
	"github.com/collabsvc/collab/collabtest"
)

// sent is one request the client sent to the fake.
type sent struct {
	Method string
	Path   string // escaped
	Query  url.Values
	Form   url.Values // a form body's values
}

// recorder keeps every request that goes through it.
type recorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	reqs []sent
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	s := sent{Method: req.Method, Path: req.URL.EscapedPath(), Query: req.URL.Query()}
	if req.Body != nil && req.Header.Get("Content-Type") == "application/x-www-form-urlencoded" {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		s.Form, _ = url.ParseQuery(string(body))
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, s)
	r.mu.Unlock()
	return r.base.RoundTrip(req)
}

// take returns the requests since the last take.
func (r *recorder) take() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.reqs
	r.reqs = nil
	return out
}

// world is a fake server with a project, seeded records, and an MCP
// session with a server over it.
type world struct {
	t       *testing.T
	fake    *collabtest.Server
	rec     *recorder
	client  *collab.Client
	session *mcp.ClientSession
	token   string

	alice, bob collabtest.User
	p          *collab.Project // alice's project, where bob reports
	project    int             // its id
	path       string          // its path
}

// newWorld starts the fake and a server with sel and the options that
// opts changes, connected through in-memory transports.
func newWorld(t *testing.T, sel Selection, opts func(*Options)) *world {
	t.Helper()
	w := &world{t: t, fake: collabtest.NewTestServer(t)}
	w.alice = w.fake.AddUser("alice", false)
	w.bob = w.fake.AddUser("bob", false)
	w.p = w.fake.Seed.Project(w.alice, "webshop", collab.PublicVisibility)
	w.project = w.p.ID
	w.path = "alice/webshop"
	w.fake.Seed.Member(w.p, w.bob, collab.ReporterAccess)
	w.token = w.alice.Token
	w.rec = &recorder{base: http.DefaultTransport}
	c, err := collab.NewClient(w.fake.URL, collab.WithPrivateToken(w.token), collab.WithHTTPClient(HTTPClient(w.rec)))
	if err != nil {
		t.Fatal(err)
	}
	w.client = c
	o := Options{Client: c, Token: w.token, Version: "test"}
	if opts != nil {
		opts(&o)
	}
	specs, err := sel.Select(FromOps(ops.All()))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(specs, o)
	if err != nil {
		t.Fatal(err)
	}
	w.session = connect(t, srv)
	return w
}

// connect connects a client to srv through in-memory transports.
func connect(t *testing.T, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// tools lists the session's tools.
func (w *world) tools() []*mcp.Tool {
	w.t.Helper()
	var out []*mcp.Tool
	for tool, err := range w.session.Tools(context.Background(), nil) {
		if err != nil {
			w.t.Fatal(err)
		}
		out = append(out, tool)
	}
	return out
}

// call calls a tool and returns its answer; a protocol error fails the
// test.
func (w *world) call(name string, args map[string]any) *mcp.CallToolResult {
	w.t.Helper()
	w.rec.take()
	res, err := w.session.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		w.t.Fatalf("%s: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured answer
// into a generic value.
func (w *world) ok(name string, args map[string]any) map[string]any {
	w.t.Helper()
	res := w.call(name, args)
	if res.IsError {
		w.t.Fatalf("%s(%v): error answer: %s", name, args, text(res))
	}
	var m map[string]any
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		w.t.Fatalf("%s: structured answer %s: %v", name, raw, err)
	}
	return m
}

// text is the text of an answer.
func text(res *mcp.CallToolResult) string {
	var b bytes.Buffer
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
