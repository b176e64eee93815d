package cassette

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Format and Version mark a cassette file. A reader refuses
// another format, and a version newer than the one it knows.
const (
	Format  = "collab-cassette"
	Version = 1
)

// DeliveryKind is the Kind of an exchange that is a webhook delivery, made
// by the server to a receiver, rather than a request to the server.
const DeliveryKind = "delivery"

// A Cassette is a recorded session: every exchange in the order it was
// answered. It is stored as indented JSON, one exchange per block, with
// secrets replaced by placeholders (see Recorder), so that two recordings
// compare well with diff.
type Cassette struct {
	Format    string     `json:"format"`
	Version   int        `json:"version"`
	Exchanges []Exchange `json:"exchanges"`
}

// An Exchange is one request and its answer.
type Exchange struct {
	// Kind is "" for a request to the server, DeliveryKind for a webhook
	// delivery sent by the server.
	Kind string `json:"kind,omitempty"`
	// Route names the request by the method and route template of the API,
	// such as "GET /api/v3/projects/:id/issues", or "DELIVERY Issue Hook".
	// A path that matches no known route is named by its method and path.
	Route  string     `json:"route"`
	Method string     `json:"method"`
	Path   string     `json:"path"` // escaped, without the query
	Query  url.Values `json:"query,omitempty"`
	// Request holds the headers that matter (Content-Type, Accept, the
	// webhook event, and the authentication headers with their values
	// replaced) and the body.
	Request  Message `json:"request"`
	Status   int     `json:"status"`
	Response Message `json:"response"`
}

// A Message is the headers and the body of a request or a response. A body
// is stored in the first of JSON, Text and Base64 that holds it: JSON when
// it is JSON, Text when it is UTF-8 text (a form, say), Base64 otherwise.
type Message struct {
	Header http.Header     `json:"header,omitempty"`
	JSON   json.RawMessage `json:"json,omitempty"`
	Text   string          `json:"text,omitempty"`
	Base64 []byte          `json:"base64,omitempty"`
}

// Body returns the message's body as bytes.
func (m Message) Body() []byte {
	switch {
	case m.JSON != nil:
		return m.JSON
	case m.Text != "":
		return []byte(m.Text)
	}
	return m.Base64
}

// setBody stores b in the field that suits it: JSON only when the message
// says it is JSON (or says nothing), so that a text body that happens to
// parse is kept byte for byte.
func (m *Message) setBody(b []byte) {
	m.JSON, m.Text, m.Base64 = nil, "", nil
	mt := m.mediaType()
	switch {
	case len(b) == 0:
	case (mt == "" || strings.HasSuffix(mt, "json")) && json.Valid(b):
		var buf bytes.Buffer
		_ = json.Compact(&buf, b) // b is valid
		m.JSON = buf.Bytes()
	case utf8.Valid(b):
		m.Text = string(b)
	default:
		m.Base64 = b
	}
}

// mediaType is the message's Content-Type without its parameters.
func (m Message) mediaType() string {
	mt, _, _ := mime.ParseMediaType(m.Header.Get("Content-Type"))
	return mt
}

// URL returns the exchange's path and query, as sent.
func (e *Exchange) URL() string {
	if len(e.Query) == 0 {
		return e.Path
	}
	return e.Path + "?" + e.Query.Encode()
}

// Read decodes a cassette from r.
func Read(r io.Reader) (*Cassette, error) {
	var c Cassette
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("cassette: reading a cassette: %w", err)
	}
	if c.Format != Format {
		return nil, fmt.Errorf("cassette: not a cassette: format %q, want %q", c.Format, Format)
	}
	if c.Version < 1 || c.Version > Version {
		return nil, fmt.Errorf("cassette: cassette version %d; this reader knows 1 to %d", c.Version, Version)
	}
	for i, e := range c.Exchanges {
		if e.Method == "" || !strings.HasPrefix(e.Path, "/") || e.Status < 100 || e.Status > 999 {
			return nil, fmt.Errorf("cassette: cassette exchange %d: a method, a path from / and a status are required", i)
		}
		if e.Kind != "" && e.Kind != DeliveryKind {
			return nil, fmt.Errorf("cassette: cassette exchange %d: unknown kind %q", i, e.Kind)
		}
	}
	return &c, nil
}

// Load reads the cassette in file.
func Load(file string) (*Cassette, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}

// WriteTo encodes c as indented JSON, with Format and Version set.
func (c *Cassette) WriteTo(w io.Writer) (int64, error) {
	out := *c
	out.Format, out.Version = Format, Version
	if out.Exchanges == nil {
		out.Exchanges = []Exchange{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // bodies stay readable: <, > and & as they came
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return 0, fmt.Errorf("cassette: encoding a cassette: %w", err)
	}
	n, err := w.Write(buf.Bytes())
	return int64(n), err
}

// WriteFile writes c to file, through a temporary file beside it, so that
// a reader never sees half a cassette.
func (c *Cassette) WriteFile(file string) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".cassette-*")
	if err != nil {
		return err
	}
	_, werr := c.WriteTo(tmp)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), file)
}
