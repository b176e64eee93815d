package collab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/collabsvc/collab/internal/wire"
)

// The fuzz targets run their seed corpus (here and in testdata/fuzz) as
// ordinary tests; `go test -fuzz FuzzX` explores further.

func FuzzParseErrorBody(f *testing.F) {
	for _, s := range []string{
		`{"message": "404 Project Not Found"}`,
		`{"message": {"title": ["is invalid"], "namespace": {"name": ["too long"]}}}`,
		`{"error": "416 Range Not Satisfiable"}`,
		`["a", "b"]`, `<html><body>502</body></html>`, ``, `null`, `{"message": [[[{"a": [1]}]]]}`, "\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		msg, fields := parseErrorBody(body)
		if strings.ContainsAny(msg, "\n\r\t") {
			t.Fatalf("message is not one line: %q", msg)
		}
		if !utf8.ValidString(msg) {
			t.Fatalf("message is not valid UTF-8: %q", msg)
		}
		if !json.Valid(body) && len(msg) > maxExcerpt+len("…") {
			t.Fatalf("excerpt too long: %d", len(msg))
		}
		for k, v := range fields {
			if len(v) == 0 {
				t.Fatalf("field %q has no messages", k)
			}
		}
	})
}

func FuzzParseLink(f *testing.F) {
	for _, s := range []string{
		`<https://h/api/v3/x?page=1>; rel="prev", <https://h/api/v3/x?page=3>; rel="next", <https://h/api/v3/x?page=1>; rel="first", <https://h/api/v3/x?page=9>; rel="last"`,
		`<a>;rel=next`, `<<>>;;rel`, `, , ,`, `<a>; rel="next prev"; rel=last`, `<a`, `>`, `<>; rel=`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		for rel, target := range parseLink(h) {
			if rel == "" || strings.ContainsAny(rel, " \t\"'") || rel != strings.ToLower(rel) {
				t.Fatalf("bad rel %q", rel)
			}
			if strings.ContainsAny(target, "<>") {
				t.Fatalf("target %q keeps its brackets", target)
			}
		}
	})
}

func FuzzFlexDecoders(f *testing.F) {
	for _, s := range []string{`true`, `"true"`, `"on"`, `1`, `"2"`, `null`, `""`, `"2016-01-04T15:31:46.176Z"`, `"2016-01-04"`, `{}`, `[`, `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var b FlexBool
		if err := b.UnmarshalJSON(data); err == nil && isNull(data) && bool(b) {
			t.Fatal("null decoded as true")
		}
		var n FlexInt
		_ = n.UnmarshalJSON(data)
		var tm Time
		if err := tm.UnmarshalJSON(data); err == nil && !tm.IsZero() {
			// What decodes must survive a round trip.
			out, err := tm.MarshalJSON()
			if err != nil {
				t.Fatalf("marshal: %v", err)
			}
			var back Time
			if err := back.UnmarshalJSON(out); err != nil || !back.Equal(tm.Time) {
				t.Fatalf("round trip of %s: %s -> %v (%v)", data, out, back, err)
			}
		}
	})
}

// FuzzPathSegment checks the escaper's property: the server decodes exactly
// the input back from one segment, and nothing escapes into another segment,
// the query or the fragment, and no segment is a dot segment.
func FuzzPathSegment(f *testing.F) {
	for _, s := range []string{"group/project", "..", "../x", "a?b", "a#b", "%2F", "ünï", "my.site", ".", "a/../b", "\x00", " "} {
		f.Add(s)
	}
	base, _ := url.Parse("https://h.example/api/v3/")
	f.Fuzz(func(t *testing.T, in string) {
		seg, err := wire.Segment(in)
		if in == "" {
			if err == nil {
				t.Fatal("empty value accepted")
			}
			return
		}
		if err != nil {
			t.Fatalf("wire.Segment(%q): %v", in, err)
		}
		if strings.ContainsAny(seg, "/?#.") {
			t.Fatalf("segment %q of %q holds a separator or a dot", seg, in)
		}
		back, err := url.PathUnescape(seg)
		if err != nil || back != in {
			t.Fatalf("decoded %q back as %q (%v)", in, back, err)
		}
		u, err := url.Parse(base.String() + "projects/" + seg + "/issues")
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		if u.RawQuery != "" || u.Fragment != "" || u.Host != "h.example" {
			t.Fatalf("%q changed the URL: %s", in, u)
		}
		parts := strings.Split(u.EscapedPath(), "/")
		if len(parts) != 6 || parts[4] != seg || parts[5] != "issues" {
			t.Fatalf("%q changed the path: %s", in, u.EscapedPath())
		}
	})
}

// bodyTransport answers every request with 200 and body.
type bodyTransport []byte

func (b bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(b)),
		ContentLength: -1,
		Request:       r,
	}, nil
}

// FuzzListDecode decodes any body as a list and as an iterator page: no
// panic, no nil record, and an error that is one line and bounded.
func FuzzListDecode(f *testing.F) {
	for _, s := range []string{
		`[{"id":1},null,{"id":2}]`, `[null]`, `null`, `[]`, `{"id":1}`, `[1,"a",[]]`, `[{"id":"x"}]`,
		`[{"id":1,"created_at":"2016-01-01"}]`, `[{"owner":null,"namespace":{}}]`, `[` + strings.Repeat(`{},`, 3000) + `{}]`,
		"\x1f\x8b", `[{"id":1}] trailing`, ``, ` `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, err := NewClient("https://h.example", WithHTTPClient(&http.Client{Transport: bodyTransport(body)}),
			WithoutRetries(), WithMaxResponseSize(8<<10))
		if err != nil {
			t.Fatal(err)
		}
		check := func(err error) {
			if err == nil {
				return
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || len(msg) > 2000 || !utf8.ValidString(msg) {
				t.Fatalf("error text %q", msg)
			}
			if len(body) > 8<<10 && !errors.Is(err, ErrResponseTooLarge) {
				t.Fatalf("a %d-byte body gave %v", len(body), err)
			}
		}
		ps, _, err := c.Projects.List(context.Background(), nil)
		check(err)
		for _, p := range ps {
			if p == nil {
				t.Fatal("nil record from List")
			}
		}
		n := 0
		for p, err := range c.Projects.All(context.Background(), nil) {
			check(err)
			if err == nil && p == nil {
				t.Fatal("nil record from All")
			}
			if n++; n > 10000 {
				t.Fatal("the iterator does not end")
			}
		}
	})
}

// FuzzErrorText builds server errors that repeat a token inside any
// message, in each body shape, and checks the error text: one line, no
// control or reordering character, bounded, and without the token.
func FuzzErrorText(f *testing.F) {
	f.Add("401 Unauthorized", "glpat-0123456789abcdef", uint8(0))
	f.Add("\x1b[31mred\x1b[0m\r\nX-Injected: 1\u202eevil", "tok/with+plus=", uint8(1))
	f.Add(strings.Repeat("é", 5000), "abcdefgh", uint8(2))
	f.Add("<html><body><pre>PRIVATE-TOKEN: %s</pre></body></html>", "t0k3n&<>\"'", uint8(3))
	f.Add("\xff\xfe\x00", "zzzzzzzz", uint8(4))
	f.Fuzz(func(t *testing.T, msg, token string, shape uint8) {
		if len(token) < 8 || strings.TrimFunc(token, isTokenRune) != "" {
			return // tokens are printable without spaces or backslashes
		}
		text := strings.ReplaceAll(msg, "%s", token) + " " + token
		jsonText, _ := json.Marshal(text)
		body := [...]string{
			`{"message":` + string(jsonText) + `}`,
			`{"message":{"base":[` + string(jsonText) + `]}}`,
			`{"error":` + string(jsonText) + `}`,
			`[` + string(jsonText) + `]`,
			`<html><body>` + html.EscapeString(text) + `</body></html>`,
			text,
			url.QueryEscape(text),
		}[int(shape)%7]
		resp := &http.Response{StatusCode: 400 + int(shape)%100, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
		u, _ := url.Parse("https://h.example/api/v3/projects?private_token=" + url.QueryEscape(token))
		e := newErrorResponse(resp, "GET", u, []string{token})
		for _, s := range []string{e.Error(), e.Message, string(e.Body), wire.CleanText(text, wire.MaxMessage)} {
			if s == wire.CleanText(text, wire.MaxMessage) {
				if strings.ContainsAny(s, "\n\r") || !utf8.ValidString(s) || len(s) > wire.MaxMessage+12 {
					t.Fatalf("cleanText gave %q", s)
				}
				continue
			}
			if strings.Contains(s, token) {
				t.Fatalf("token in %q", s)
			}
		}
		got := e.Error()
		if strings.ContainsAny(got, "\n\r") || !utf8.ValidString(got) || len(got) > 600 {
			t.Fatalf("error text %q", got)
		}
		for _, r := range got {
			if wire.UnsafeRune(r) {
				t.Fatalf("unsafe rune %U in %q", r, got)
			}
		}
	})
}

func isTokenRune(r rune) bool {
	return r > ' ' && r < 0x7f && r != '\\'
}
