package collab

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The decoders of times, flags and ids were rewritten to read the usual
// forms without allocating. The fuzz targets below hold them to the
// implementations they replaced, kept here as references: whatever the old
// decoder accepted as JSON, the new one accepts with the same value.

// The layouts Time was parsed with, each tried in turn.
var referenceLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999 -0700",
	"2006-01-02 15:04:05.999999999 MST",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02",
}

func referenceParseTime(s string) (t time.Time, layout string, err error) {
	s = strings.TrimSpace(s)
	for _, layout := range referenceLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, layout, nil
		}
	}
	return time.Time{}, "", fmt.Errorf("unrecognised time %q", s)
}

// referenceUnmarshalTime reports ok and the time, or !ok for an error.
// Decoding null changes nothing, which it reports as the zero time.
func referenceUnmarshalTime(b []byte) (t time.Time, layout string, ok bool) {
	if isNull(b) {
		return time.Time{}, "", true
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return time.Time{}, "", false
	}
	if s == "" {
		return time.Time{}, "", true
	}
	t, layout, err := referenceParseTime(s)
	return t, layout, err == nil
}

func referenceFlexBool(data []byte) (bool, error) {
	if isNull(data) {
		return false, nil
	}
	s := string(data)
	if unq, err := strconv.Unquote(s); err == nil {
		s = unq
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "t", "on", "yes":
		return true, nil
	case "false", "0", "f", "off", "no", "":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean")
}

func referenceFlexInt(data []byte) (int64, error) {
	if isNull(data) {
		return 0, nil
	}
	s := string(data)
	if unq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(unq)
	}
	if s == "" {
		return 0, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// FuzzParseTime holds ParseTime and Time.UnmarshalJSON to the reference on
// any text, and checks that whatever they accept survives encoding and
// decoding again.
func FuzzParseTime(f *testing.F) {
	for _, v := range timeVariants {
		f.Add(v.in)
	}
	for _, s := range []string{
		"2016-01-04 15:31:46 PST", "2016-01-04 15:31:46 GMT+3", "2016-01-04 15:31:46 +02", "2016-01-04T15:31:46+24:00",
		"2016-02-30", "2016-01-04T15:31:46.Z", "2015-04-08T21: 00:25-07:00", "9999-12-31T23:59:59.999999999-23:59",
		"0000-01-01T00:00:00+23:59", "2016-01-04T15:31:46 UTC", "2016-01-04 15:31", "", "null", `"x"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTime(s)
		want, layout, werr := referenceParseTime(s)
		if werr == nil {
			if err != nil {
				t.Fatalf("ParseTime(%q): %v; it used to read %v", s, err, want)
			}
			sameTime(t, s, got, want, layout)
		}
		if err == nil {
			roundTrip(t, s, got)
		}

		quoted, _ := json.Marshal(s)
		for _, b := range [][]byte{quoted, []byte(s)} {
			var tm Time
			err := tm.UnmarshalJSON(b)
			want, layout, ok := referenceUnmarshalTime(b)
			if ok {
				if err != nil {
					t.Fatalf("UnmarshalJSON(%s): %v; it used to read %v", b, err, want)
				}
				sameTime(t, string(b), tm, want, layout)
			}
			if err == nil {
				roundTrip(t, string(b), tm)
			} else if !tm.IsZero() {
				t.Fatalf("UnmarshalJSON(%s) failed but set %v", b, tm)
			}
		}
	})
}

// sameTime checks a decoded Time against the reference's time and layout.
func sameTime(t *testing.T, in string, got Time, want time.Time, layout string) {
	t.Helper()
	if name, _ := want.Zone(); layout == "2006-01-02 15:04:05.999999999 MST" && strings.ContainsAny(name[:1], "+-") {
		// time.Parse took a numeric offset such as "+02" for an unknown zone
		// abbreviation and read it as UTC; Time reads it as an offset.
		return
	}
	_, gotOffset := got.Zone()
	_, wantOffset := want.Zone()
	if !got.Equal(want) || gotOffset != wantOffset || got.DateOnly != (layout == "2006-01-02") {
		t.Fatalf("%q: got %v (offset %d, date only %t), used to be %v (offset %d, layout %s)",
			in, got.Time, gotOffset, got.DateOnly, want, wantOffset, layout)
	}
}

// roundTrip checks that a decoded Time encodes to a value that decodes to
// the same instant or date, and encodes to the same text again.
func roundTrip(t *testing.T, in string, tm Time) {
	t.Helper()
	out, err := tm.MarshalJSON()
	if err != nil {
		// Only a year RFC 3339 cannot write, in the value's zone or in UTC
		// (which an offset of 24 hours or more is written in), is refused.
		if y, u := tm.Year(), tm.UTC().Year(); y < 0 || y > 9999 || u < 0 || u > 9999 {
			return
		}
		t.Fatalf("%q: encoding %v: %v", in, tm.Time, err)
	}
	back := Time{Time: time.Unix(1, 0)}
	if err := back.UnmarshalJSON(out); err != nil {
		t.Fatalf("%q encoded as %s, which does not decode: %v", in, out, err)
	}
	if tm.IsZero() {
		if string(out) != "null" {
			t.Fatalf("%q: the zero time encoded as %s", in, out)
		}
		return
	}
	again, _ := back.MarshalJSON()
	if !back.Equal(tm.Time) || back.DateOnly != tm.DateOnly || string(again) != string(out) {
		t.Fatalf("%q: %v encoded as %s, decoded as %v, encoded as %s", in, tm.Time, out, back.Time, again)
	}
}

// FuzzFlexScalars holds the decoding of flags and ids to the references.
func FuzzFlexScalars(f *testing.F) {
	for _, s := range []string{
		`true`, `false`, `"true"`, `"FALSE"`, `" on "`, `"\u0074"`, `'t'`, "`yes`", `1`, `"0"`, `null`, `""`, ` null `,
		`2`, `"-3"`, `" 7 "`, `"+5"`, `9223372036854775807`, `"9223372036854775808"`, `2.5`, `"\u0032"`, `{}`, "\"\xff\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // never handed to a decoder
		}
		b, err := decodeFlag(data)
		if want, werr := referenceFlexBool(data); werr == nil && (err != nil || b != want) {
			t.Fatalf("flag %q: %v, %v; it used to read %v", data, b, err, want)
		}
		n, err := decodeID(data)
		if want, werr := referenceFlexInt(data); werr == nil && strconv.IntSize == 64 && (err != nil || int64(n) != want) {
			t.Fatalf("id %q: %v, %v; it used to read %v", data, n, err, want)
		}
		if err != nil && n != 0 {
			t.Fatalf("id %q failed but set %d", data, n)
		}
	})
}
