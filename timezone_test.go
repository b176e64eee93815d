package collab

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTimeLocations: every form of a time decodes into one location,
// whatever the machine's zone: UTC for a zero offset, and an unnamed fixed
// zone for another, so that decoded times equal times built with time.UTC
// and time.FixedZone, and survive a round trip.
func TestTimeLocations(t *testing.T) {
	for _, c := range []struct {
		in     string
		offset int
	}{
		{`"2016-06-21T09:14:07Z"`, 0},
		{`"2016-06-21T09:14:07+00:00"`, 0},
		{`"2016-06-21 09:14:07 +0000"`, 0},
		{`"2016-06-21 09:14:07 UTC"`, 0},
		{`"2016-06-21 09:14:07 GMT"`, 0}, // read by time.Parse
		{`"2016-06-21T09:14:07"`, 0},
		{`"2016-06-21T11:14:07+02:00"`, 7200},
		{`"2016-06-21 11:14:07 +0200"`, 7200},
		{`"2016-06-21T04:14:07.000-05:00"`, -18000},
	} {
		var got Time
		require.NoError(t, json.Unmarshal([]byte(c.in), &got), c.in)
		loc := time.UTC
		if c.offset != 0 {
			loc = time.FixedZone("", c.offset)
		}
		want := Time{Time: time.Date(2016, 6, 21, 9, 14, 7, 0, time.UTC).In(loc)}
		assert.Equal(t, want, got, c.in)
		b, err := json.Marshal(got)
		require.NoError(t, err)
		var again Time
		require.NoError(t, json.Unmarshal(b, &again))
		assert.Equal(t, got, again, "%s written as %s", c.in, b)
	}
}
