package collab

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
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
		seg, err := pathSegment(in)
		if in == "" {
			if err == nil {
				t.Fatal("empty value accepted")
			}
			return
		}
		if err != nil {
			t.Fatalf("pathSegment(%q): %v", in, err)
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
