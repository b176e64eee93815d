package suite

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// CheckErrors records the error text of every failed call in r and checks
// that it does not hold secret, reads as one line without control
// characters, stays under 1000 bytes, and does not speak of a panic.
func CheckErrors(t testing.TB, r *Recorder, calls []Call, secret string) {
	t.Helper()
	for _, call := range calls {
		if call.Err == nil {
			continue
		}
		msg := call.Err.Error()
		r.Record(msg)
		assert.NotContains(t, msg, secret, call.Name)
		assert.False(t, strings.ContainsAny(msg, "\n\r\x1b\x07\u202e"), "%s: %q", call.Name, msg)
		assert.Less(t, len(msg), 1000, call.Name)
		assert.NotContains(t, msg, "panic", call.Name)
	}
}
