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

func TestTimeDecoding(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	tests := []struct {
		in   string
		want time.Time
	}{
		{`"2016-01-04T15:31:46.176Z"`, utc(2016, 1, 4, 15, 31, 46, 176e6)},
		{`"2016-01-04T15:31:46Z"`, utc(2016, 1, 4, 15, 31, 46, 0)},
		{`"2016-01-04T17:31:46.176+02:00"`, utc(2016, 1, 4, 15, 31, 46, 176e6)},
		{`"2016-01-04T17:31:46+0200"`, utc(2016, 1, 4, 15, 31, 46, 0)},
		{`"2016-01-04T15:31:46"`, utc(2016, 1, 4, 15, 31, 46, 0)},
		{`"2016-01-04T15:31:46.123456"`, utc(2016, 1, 4, 15, 31, 46, 123456000)},
		{`"2016-01-04 15:31:46 UTC"`, utc(2016, 1, 4, 15, 31, 46, 0)},
		{`"2016-01-04 15:31:46 +0100"`, utc(2016, 1, 4, 14, 31, 46, 0)},
		{`"2016-01-04 15:31:46"`, utc(2016, 1, 4, 15, 31, 46, 0)},
		{`"2016-01-04T15:31Z"`, utc(2016, 1, 4, 15, 31, 0, 0)},
		{`"2016-01-04"`, utc(2016, 1, 4, 0, 0, 0, 0)},
	}
	for _, tt := range tests {
		var v Time
		require.NoError(t, json.Unmarshal([]byte(tt.in), &v), tt.in)
		assert.True(t, tt.want.Equal(v.Time), "%s: got %v", tt.in, v.Time)
	}
	var p *Time
	require.NoError(t, json.Unmarshal([]byte(`null`), &p))
	assert.Nil(t, p)
	var z Time
	require.NoError(t, json.Unmarshal([]byte(`""`), &z))
	assert.True(t, z.IsZero())
	for _, bad := range []string{`"yesterday"`, `12`, `"2016-13-45"`, `{}`} {
		assert.Error(t, json.Unmarshal([]byte(bad), &z), bad)
	}
}

func TestTimeEncoding(t *testing.T) {
	b, err := json.Marshal(Time{time.Date(2016, 1, 4, 15, 31, 46, 176e6, time.UTC)})
	require.NoError(t, err)
	assert.Equal(t, `"2016-01-04T15:31:46.176Z"`, string(b))
	b, err = json.Marshal(Time{})
	require.NoError(t, err)
	assert.Equal(t, `null`, string(b))
	_, err = ParseTime("nope")
	assert.Error(t, err)
}

func TestFlexBool(t *testing.T) {
	for in, want := range map[string]bool{
		`true`: true, `false`: false, `"true"`: true, `"false"`: false, `"TRUE"`: true, `1`: true, `0`: false,
		`"1"`: true, `"t"`: true, `"on"`: true, `"off"`: false, `null`: false, `""`: false, `"yes"`: true, `"no"`: false,
	} {
		var b FlexBool = !FlexBool(want)
		require.NoError(t, json.Unmarshal([]byte(in), &b), in)
		assert.Equal(t, want, bool(b), in)
	}
	var b FlexBool
	for _, bad := range []string{`"maybe"`, `2`, `[]`} {
		assert.Error(t, json.Unmarshal([]byte(bad), &b), bad)
	}
}

func TestFlexInt(t *testing.T) {
	for in, want := range map[string]int{`2`: 2, `"2"`: 2, `" 7 "`: 7, `null`: 0, `""`: 0, `-3`: -3, `"-3"`: -3} {
		var n FlexInt = 99
		require.NoError(t, json.Unmarshal([]byte(in), &n), in)
		assert.Equal(t, want, int(n), in)
	}
	var n FlexInt
	for _, bad := range []string{`"two"`, `2.5`, `true`, `"9999999999999999999999"`, `"` + string(make([]byte, 50)) + `"`} {
		assert.Error(t, json.Unmarshal([]byte(bad), &n), bad)
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
