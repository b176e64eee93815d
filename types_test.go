package collab

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	require.NoError(t, err)
	return u
}

// timeVariants is every form Time decodes, with the instant it stands for:
// the forms the API, the webhook deliveries and the job queue send, the
// layouts Time has always accepted, and the leniencies of time.Parse that
// came with them.
var timeVariants = []struct {
	in   string // the JSON string's content
	want time.Time
}{
	// What servers send.
	{"2016-01-04T15:31:51.081Z", utc(2016, 1, 4, 15, 31, 51, 81e6)},      // API records
	{"2013-12-03T17:15:43Z", utc(2013, 12, 3, 17, 15, 43, 0)},            // API records, vendor webhook examples
	{"2016-01-04T15:31:51.081+01:00", utc(2016, 1, 4, 14, 31, 51, 81e6)}, // API records of a zoned instance
	{"2016-01-04T15:31:51.081-05:00", utc(2016, 1, 4, 20, 31, 51, 81e6)}, //
	{"2016-06-20T17:42:11+02:00", utc(2016, 6, 20, 15, 42, 11, 0)},       // commit timestamps
	{"2016-06-21 09:14:07 UTC", utc(2016, 6, 21, 9, 14, 7, 0)},           // webhook database times
	{"2016-06-21 11:14:07 +0200", utc(2016, 6, 21, 9, 14, 7, 0)},         // the same on a non-UTC instance
	{"2016-06-21 04:14:07 -0500", utc(2016, 6, 21, 9, 14, 7, 0)},         //
	{"2016-07-01", utc(2016, 7, 1, 0, 0, 0, 0)},                          // due dates
	// RFC 3339 with and without fractions.
	{"2016-01-04T15:31:46Z", utc(2016, 1, 4, 15, 31, 46, 0)},
	{"2016-01-04T15:31:46.123456789Z", utc(2016, 1, 4, 15, 31, 46, 123456789)},
	{"2016-01-04T17:31:46.5+02:00", utc(2016, 1, 4, 15, 31, 46, 5e8)},
	{"2016-01-04T15:31:46-00:00", utc(2016, 1, 4, 15, 31, 46, 0)},
	{"2016-01-04T23:31:46+14:00", utc(2016, 1, 4, 9, 31, 46, 0)},
	{"2016-01-04T15:31:46+05:45", utc(2016, 1, 4, 9, 46, 46, 0)},
	// ISO 8601 offsets without a colon.
	{"2016-01-04T17:31:46+0200", utc(2016, 1, 4, 15, 31, 46, 0)},
	{"2016-01-04T17:31:46.25+0200", utc(2016, 1, 4, 15, 31, 46, 25e7)},
	{"2016-01-04T15:31:46.25Z", utc(2016, 1, 4, 15, 31, 46, 25e7)},
	// No zone: UTC.
	{"2016-01-04T15:31:46", utc(2016, 1, 4, 15, 31, 46, 0)},
	{"2016-01-04T15:31:46.123456", utc(2016, 1, 4, 15, 31, 46, 123456e3)},
	{"2016-01-04 15:31:46", utc(2016, 1, 4, 15, 31, 46, 0)},
	{"2016-01-04 15:31:46.999", utc(2016, 1, 4, 15, 31, 46, 999e6)},
	// A space instead of the T.
	{"2016-01-04 15:31:46Z", utc(2016, 1, 4, 15, 31, 46, 0)},
	{"2016-01-04 17:31:46+02:00", utc(2016, 1, 4, 15, 31, 46, 0)},
	{"2016-01-04 08:31:46.5-07:00", utc(2016, 1, 4, 15, 31, 46, 5e8)},
	{"2016-01-04 16:31:46 +0100", utc(2016, 1, 4, 15, 31, 46, 0)},
	{"2016-01-04 14:01:46.25 -0130", utc(2016, 1, 4, 15, 31, 46, 25e7)},
	{"2016-01-04 15:31:46.5 UTC", utc(2016, 1, 4, 15, 31, 46, 5e8)},
	{"2016-01-04 15:31:46 GMT", utc(2016, 1, 4, 15, 31, 46, 0)},
	// Minutes without seconds, with a zone.
	{"2016-01-04T15:31Z", utc(2016, 1, 4, 15, 31, 0, 0)},
	{"2016-01-04T17:31+02:00", utc(2016, 1, 4, 15, 31, 0, 0)},
	// Leniencies of time.Parse: a one-digit hour, a decimal comma, digits
	// beyond nanoseconds dropped, surrounding white space.
	{"2016-01-04T5:31:46Z", utc(2016, 1, 4, 5, 31, 46, 0)},
	{"2016-01-04T15:31:46,5Z", utc(2016, 1, 4, 15, 31, 46, 5e8)},
	{"2016-01-04T15:31:46.1234567891Z", utc(2016, 1, 4, 15, 31, 46, 123456789)},
	{`  2016-01-04T15:31:46Z \n`, utc(2016, 1, 4, 15, 31, 46, 0)},
	{"\u00a02016-01-04\u2003", utc(2016, 1, 4, 0, 0, 0, 0)},
	{`2016\u002d01-04`, utc(2016, 1, 4, 0, 0, 0, 0)}, // a JSON escape
	{"0000-01-01T00:00:00Z", utc(0, 1, 1, 0, 0, 0, 0)},
	{"2016-02-29", utc(2016, 2, 29, 0, 0, 0, 0)},
	// Read since the parser was rewritten: the other combinations of the
	// parts above, and ISO 8601 offsets of whole hours.
	{"2016-01-04 17:31:46 +02:00", utc(2016, 1, 4, 15, 31, 46, 0)},
	{"2016-01-04T15:31:46 UTC", utc(2016, 1, 4, 15, 31, 46, 0)},
	{"2016-01-04T15:31:46UTC", utc(2016, 1, 4, 15, 31, 46, 0)},
	{"2016-01-04 15:31", utc(2016, 1, 4, 15, 31, 0, 0)},
	{"2016-01-04T17:31:46+02", utc(2016, 1, 4, 15, 31, 46, 0)},
	{"2016-01-04 17:31:46.5 +02", utc(2016, 1, 4, 15, 31, 46, 5e8)}, // time.Parse took +02 for a zone name, and UTC
}

func utc(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
	return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
}

func TestTimeDecoding(t *testing.T) {
	for _, tt := range timeVariants {
		var v Time
		require.NoError(t, json.Unmarshal([]byte(`"`+tt.in+`"`), &v), tt.in)
		assert.True(t, tt.want.Equal(v.Time), "%s: got %v", tt.in, v.Time)

		var s string
		require.NoError(t, json.Unmarshal([]byte(`"`+tt.in+`"`), &s))
		p, err := ParseTime(s)
		require.NoError(t, err, tt.in)
		assert.True(t, tt.want.Equal(p.Time), "ParseTime(%q): got %v", s, p.Time)
	}
}

func TestTimeRejects(t *testing.T) {
	for _, bad := range []string{
		`"yesterday"`, `"2016-13-45"`, `"2016-02-30"`, `"2015-02-29"`, `"2016-01-04T24:00:00Z"`, `"2016-01-04T15:60:00Z"`,
		`"2016-01-04T15:31:60Z"`, `"15:31:46"`, `"2016-1-4"`, `"2016-01-04T15:31:46.Z"`, `"2016-01-04T15:31:46+2"`,
		`"2016-01-04X15:31:46Z"`, `"2016-01-04T15:31:46Z trailing"`, `"   "`, `"2016-01-04 15:31:46 utc"`,
		`"2015-04-08T21: 00:25-07:00"`, `"2016 - 12 - 01 13: 11: 10 UTC"`, // malformed times in third-party payloads
		`12`, `true`, `{}`, `[]`, `"2016-01-04`, `2016-01-04"`, `'2016-01-04'`,
	} {
		var v Time
		err := json.Unmarshal([]byte(bad), &v)
		if err == nil {
			err = v.UnmarshalJSON([]byte(bad)) // invalid JSON never reaches the method through json.Unmarshal
		}
		assert.Error(t, err, bad)
		assert.True(t, v.IsZero(), bad)
	}
	_, err := ParseTime("nope")
	assert.ErrorContains(t, err, `unrecognised time "nope"`)
}

func TestTimeNullAndEmpty(t *testing.T) {
	var p *Time
	require.NoError(t, json.Unmarshal([]byte(`null`), &p))
	assert.Nil(t, p)
	// null leaves a Time as it was, as it does a time.Time; "" is the zero Time.
	v := Time{Time: utc(2016, 1, 4, 0, 0, 0, 0)}
	require.NoError(t, json.Unmarshal([]byte(`null`), &v))
	assert.False(t, v.IsZero())
	require.NoError(t, json.Unmarshal([]byte(`""`), &v))
	assert.True(t, v.IsZero())
}

func TestTimeEncoding(t *testing.T) {
	for in, want := range map[string]string{
		`"2016-01-04T15:31:46.176Z"`:       `"2016-01-04T15:31:46.176Z"`,
		`"2016-06-21 09:14:07 UTC"`:        `"2016-06-21T09:14:07Z"`,
		`"2016-06-21 11:14:07 +0200"`:      `"2016-06-21T11:14:07+02:00"`, // the offset is kept
		`"2016-06-20T17:42:11-05:00"`:      `"2016-06-20T17:42:11-05:00"`,
		`"2016-06-21 09:14:07.120 -0130"`:  `"2016-06-21T09:14:07.12-01:30"`,
		`"2016-06-21 09:14:07"`:            `"2016-06-21T09:14:07Z"`,
		`"2016-07-01"`:                     `"2016-07-01"`, // a date stays a date
		`"2016-01-04T00:00:00Z"`:           `"2016-01-04T00:00:00Z"`,
		`"0000-01-01T00:30:00+01:00"`:      `"0000-01-01T00:30:00+01:00"`,
		`"9999-12-31T23:59:59.999999999Z"`: `"9999-12-31T23:59:59.999999999Z"`,
		`""`:                               `null`,
	} {
		var v Time
		require.NoError(t, json.Unmarshal([]byte(in), &v), in)
		b, err := json.Marshal(v)
		require.NoError(t, err, in)
		assert.Equal(t, want, string(b), in)
	}
	b, err := json.Marshal(Time{Time: time.Date(2016, 1, 4, 15, 31, 46, 0, time.UTC), DateOnly: true})
	require.NoError(t, err)
	assert.Equal(t, `"2016-01-04"`, string(b))
	b, err = json.Marshal(struct{ T, U *Time }{T: &Time{}})
	require.NoError(t, err)
	assert.Equal(t, `{"T":null,"U":null}`, string(b))
	// Offsets RFC 3339 cannot write become UTC: the instant is kept.
	for in, want := range map[string]string{
		`"2016-01-04T15:31:46+24:00"`: `"2016-01-03T15:31:46Z"`,
		`"2016-01-04T15:31:46-23:60"`: `"2016-01-05T15:31:46Z"`,
	} {
		var v Time
		require.NoError(t, json.Unmarshal([]byte(in), &v), in)
		b, err := json.Marshal(v)
		require.NoError(t, err, in)
		assert.Equal(t, want, string(b), in)
	}
	b, err = json.Marshal(Time{Time: time.Date(1900, 1, 1, 0, 19, 32, 0, time.FixedZone("LMT", 19*60+32))})
	require.NoError(t, err)
	assert.Equal(t, `"1900-01-01T00:00:00Z"`, string(b))
	for _, y := range []int{-1, 10000} {
		_, err = json.Marshal(Time{Time: time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)})
		assert.ErrorContains(t, err, "year", y)
	}
}

// Every variant survives a decode and encode: the same instant, and a date
// stays a date.
func TestTimeRoundTrip(t *testing.T) {
	for _, tt := range timeVariants {
		var v, back Time
		require.NoError(t, json.Unmarshal([]byte(`"`+tt.in+`"`), &v), tt.in)
		b, err := json.Marshal(v)
		require.NoError(t, err, tt.in)
		require.NoError(t, json.Unmarshal(b, &back), tt.in)
		assert.True(t, back.Equal(v.Time), "%s: %v became %s", tt.in, v.Time, b)
		assert.Equal(t, v.DateOnly, back.DateOnly, tt.in)
		assert.Equal(t, len(tt.in) == 10 || tt.in == "\u00a02016-01-04\u2003" || tt.in == `2016\u002d01-04`, v.DateOnly, tt.in)
	}
}

// decodeFlag decodes data as a record reads a flag.
func decodeFlag(data []byte) (bool, error) {
	var h ProjectHook
	err := json.Unmarshal([]byte(`{"push_events":`+string(data)+`}`), &h)
	return h.PushEvents, err
}

// decodeID decodes data as a record reads an id the server may send as a
// string.
func decodeID(data []byte) (int, error) {
	m := MergeRequest{SourceProjectID: 99}
	err := json.Unmarshal([]byte(`{"source_project_id":`+string(data)+`}`), &m)
	return m.SourceProjectID, err
}

func TestLenientFlags(t *testing.T) {
	for in, want := range map[string]bool{
		`true`: true, `false`: false, `"true"`: true, `"false"`: false, `"TRUE"`: true, `1`: true, `0`: false,
		`"1"`: true, `"t"`: true, `"on"`: true, `"off"`: false, `null`: false, `""`: false, `"yes"`: true, `"no"`: false,
		`"T"`: true, `"f"`: false, `"F"`: false, `"0"`: false, `"ON"`: true, `"Yes"`: true, `"NO"`: false, `"Off"`: false,
		`" true "`: true, `"\u0074rue"`: true, `"False"`: false,
	} {
		b, err := decodeFlag([]byte(in))
		require.NoError(t, err, in)
		assert.Equal(t, want, b, in)
	}
	for _, bad := range []string{`"maybe"`, `2`, `[]`, `{}`, `"tru"`, `"yes please"`, `-1`, `0.0`} {
		_, err := decodeFlag([]byte(bad))
		assert.Error(t, err, bad)
	}
}

func TestLenientIDs(t *testing.T) {
	for in, want := range map[string]int{
		`2`: 2, `"2"`: 2, `" 7 "`: 7, `null`: 0, `""`: 0, `-3`: -3, `"-3"`: -3, `"+5"`: 5, `"007"`: 7, `0`: 0, `-0`: 0,
		`9223372036854775807`: 9223372036854775807, `"-9223372036854775808"`: -9223372036854775808, `"\u0032"`: 2, `"  "`: 0,
	} {
		n, err := decodeID([]byte(in))
		require.NoError(t, err, in)
		assert.Equal(t, want, n, in)
	}
	for _, bad := range []string{`"two"`, `2.5`, `1e3`, `"0x10"`, `"1_000"`, `true`, `[]`, `"9999999999999999999999"`, `"` + string(make([]byte, 50)) + `"`} {
		_, err := decodeID([]byte(bad))
		assert.Error(t, err, bad)
	}
}

func TestLevelsHaveNames(t *testing.T) {
	assert.Equal(t, "none", NoAccess.String())
	assert.Equal(t, "guest", GuestAccess.String())
	assert.Equal(t, "reporter", ReporterAccess.String())
	assert.Equal(t, "developer", DeveloperAccess.String())
	assert.Equal(t, "master", MasterAccess.String())
	assert.Equal(t, "owner", OwnerAccess.String())
	assert.Equal(t, "AccessLevel(15)", AccessLevel(15).String())
	assert.Equal(t, "private", PrivateVisibility.String())
	assert.Equal(t, "internal", InternalVisibility.String())
	assert.Equal(t, "public", PublicVisibility.String())
	assert.Equal(t, "VisibilityLevel(5)", VisibilityLevel(5).String())
}

func TestPtr(t *testing.T) {
	p := Ptr("x")
	assert.Equal(t, "x", *p)
	assert.Equal(t, 3, *Ptr(3))
}

// The forms servers send decode without allocating: a page of records holds
// many of them.
func TestTimeDecodingDoesNotAllocate(t *testing.T) {
	for _, s := range []string{
		`"2016-01-04T15:31:51.081Z"`, `"2016-06-20T17:42:11+02:00"`, `"2016-06-21 09:14:07 UTC"`,
		`"2016-06-21 11:14:07 +0200"`, `"2016-07-01"`, `""`, `null`,
	} {
		b := []byte(s)
		var v Time
		require.NoError(t, v.UnmarshalJSON(b))
		assert.Zero(t, testing.AllocsPerRun(100, func() { _ = v.UnmarshalJSON(b) }), s)
	}
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = ParseTime("2016-06-21 11:14:07 +0200") }))
}

// TestLenientFormsCostNothing: a flag or an id sent as a string costs no
// more allocations than one sent as JSON means it.
func TestLenientFormsCostNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not counted under the race detector, which makes sync.Pool drop what it holds")
	}
	allocs := func(body string) float64 {
		data := []byte(body)
		return testing.AllocsPerRun(100, func() {
			var h ProjectHook
			_ = json.Unmarshal(data, &h)
		})
	}
	plain := allocs(`{"push_events":true,"id":2}`)
	for _, s := range []string{`{"push_events":"true","id":"2"}`, `{"push_events":"On","id":" 2 "}`, `{"push_events":1,"id":2}`} {
		assert.Equal(t, plain, allocs(s), s)
	}
}
