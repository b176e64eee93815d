package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/collabsvc/collab"
)

// Options configure a server.
type Options struct {
	// Client makes every call, so that its limits hold across them. Build
	// it with HTTPClient for lists to report their totals.
	Client *collab.Client
	// Token is the client's token: no answer or error shows it.
	Token string
	// Trust, when set, marks or hides text by authors it does not trust.
	Trust *Trust
	// Version is the server's version in the handshake.
	Version string
}

// NewServer returns an MCP server with a tool for each of specs.
func NewServer(specs []Spec, o Options) (*mcp.Server, error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "collab", Version: o.Version}, &mcp.ServerOptions{
		Instructions: "Tools for a Collaboration Service: projects are named group/project; issues and merge requests by the number people see (iid). " +
			"Answers show trimmed records: pass fields to see more. Lists take page and per_page and say when they are truncated.",
	})
	for i := range specs {
		t, err := tool(&specs[i])
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", specs[i].Name, err)
		}
		srv.AddTool(t, handler(&specs[i], t.InputSchema.(*jsonschema.Schema), o))
	}
	return srv, nil
}

// tool describes s to a client: its schemas and its hints.
func tool(s *Spec) (*mcp.Tool, error) {
	out, err := s.outputSchema()
	if err != nil {
		return nil, err
	}
	t := &mcp.Tool{
		Name:        s.Name,
		Description: s.Description,
		InputSchema: s.inputSchema(),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: !s.Writes, IdempotentHint: s.Idempotent},
	}
	if s.Writes {
		// Only a write can destroy; the hint's default is true.
		t.Annotations.DestructiveHint = &s.Destructive
	}
	if out != nil {
		t.OutputSchema = out
	}
	return t, nil
}

// handler runs a tool call: it takes the server's own arguments out of the
// call's, runs the operation and shapes its answer. Every error is an
// error answer with the token redacted, never a protocol error.
func handler(s *Spec, in *jsonschema.Schema, o Options) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := call(ctx, s, in, o, req.Params.Arguments)
		if err != nil {
			res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
		}
		redact(res, o.Token)
		return res, nil
	}
}

// call is one tool call, answered or failed.
func call(ctx context.Context, s *Spec, in *jsonschema.Schema, o Options, raw json.RawMessage) (*mcp.CallToolResult, error) {
	args, err := decodeArgs(raw)
	if err != nil {
		return nil, err
	}
	if err := checkArgs(in, args); err != nil {
		return nil, err
	}
	var c callArgs
	if err := c.take(s, args); err != nil {
		return nil, err
	}
	ctx, info := withPageInfo(ctx)
	r, err := s.Run(ctx, o.Client, args)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Items != nil:
		return listAnswer(ctx, s, o, c, args, r, info)
	case r.Record != nil:
		rec, err := o.shapeOne(ctx, s, args, r.Record, c.fields)
		if err != nil {
			return nil, err
		}
		return structured(rec), nil
	case r.Write != nil:
		return textAnswer(r, c.maxBytes)
	}
	return structured(json.RawMessage(`{"done":true}`)), nil
}

// decodeArgs decodes a call's arguments, numbers kept exact.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	args := map[string]any{}
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		return args, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&args); err != nil {
		return nil, argError("arguments", "want a JSON object: "+err.Error())
	}
	return args, nil
}

// callArgs are the arguments the server adds, taken out of a call's.
type callArgs struct {
	page, perPage, maxBytes int
	fields                  []string
}

// take removes the server's own arguments from args, which checkArgs
// has checked, and fills c from them.
func (c *callArgs) take(s *Spec, args map[string]any) error {
	c.page, c.perPage, c.maxBytes = 1, defaultPerPage, defaultMaxBytes
	for name, to := range map[string]*int{argPage: &c.page, argPerPage: &c.perPage, argMaxBytes: &c.maxBytes} {
		if v, ok := args[name]; ok {
			*to, _ = toInt(v)
			delete(args, name)
		}
	}
	if v, ok := args[argFields]; ok {
		delete(args, argFields)
		for _, f := range v.([]any) {
			c.fields = append(c.fields, f.(string))
		}
		return checkFields(s.Record, c.fields)
	}
	return nil
}

func toInt(v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, errors.New("not a number")
	}
	return strconv.Atoi(n.String())
}

// listAnswer pulls one page of r's items: it skips the pages before, and
// tells from the server's total, or from one item more, whether the list
// goes on.
func listAnswer(ctx context.Context, s *Spec, o Options, c callArgs, args map[string]any, r Result, info *pageInfo) (*mcp.CallToolResult, error) {
	p := Page{Items: []json.RawMessage{}, Page: c.page, PerPage: c.perPage}
	skip := (c.page - 1) * c.perPage
	var recs []any
	for v, err := range r.Items {
		if err != nil {
			return nil, err
		}
		if skip > 0 {
			skip--
			continue
		}
		if len(recs) == c.perPage {
			p.Truncated = true
			break
		}
		recs = append(recs, v)
		if len(recs) == c.perPage && info.total() > 0 {
			p.Truncated = (c.page-1)*c.perPage+len(recs) < info.total()
			break
		}
	}
	p.Total = info.total()
	for _, v := range recs {
		rec, err := o.shapeOne(ctx, s, args, v, c.fields)
		if err != nil {
			return nil, err
		}
		p.Items = append(p.Items, rec)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return structured(raw), nil
}

// shapeOne encodes record v with the paths the call shows, and marks or
// hides its text when its author is not trusted.
func (o Options) shapeOne(ctx context.Context, s *Spec, args map[string]any, v any, fields []string) (json.RawMessage, error) {
	full, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(full, &obj); err != nil {
		return full, nil // not an object: nothing to trim
	}
	hideSecrets(obj, s.Record)
	out := obj
	if paths := s.paths(fields); paths != nil {
		picked := map[string]any{}
		for _, p := range paths {
			pick(picked, obj, strings.Split(p, "."))
		}
		if out, err = remarshal(picked); err != nil {
			return nil, err
		}
	}
	if o.Trust != nil {
		o.Trust.apply(ctx, obj, out, args)
	}
	return json.Marshal(out)
}

func remarshal(v any) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	return m, json.Unmarshal(raw, &m)
}

// textAnswer is the text r writes, cut at maxBytes.
func textAnswer(r Result, maxBytes int) (*mcp.CallToolResult, error) {
	w := &cutWriter{max: maxBytes}
	if err := r.Write(w); err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: w.text()}}}, nil
}

// structured answers raw as the structured content and, for clients that
// read only text, as text.
func structured(raw json.RawMessage) *mcp.CallToolResult {
	return &mcp.CallToolResult{StructuredContent: raw, Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}}
}

// redact replaces the token wherever res shows it.
func redact(res *mcp.CallToolResult, token string) {
	if token == "" {
		return
	}
	sec := collab.Secret(token)
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			t.Text = sec.Redact(t.Text)
		}
	}
	if raw, ok := res.StructuredContent.(json.RawMessage); ok {
		if clean := sec.Redact(string(raw)); clean != string(raw) && json.Valid([]byte(clean)) {
			res.StructuredContent = json.RawMessage(clean)
		} else if clean != string(raw) {
			res.StructuredContent = nil
		}
	}
}
