package collab

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBrokenPageHasNoRecords: a list whose body breaks off, or runs on
// after the array, is a *DecodeError that does not wrap FieldErrors, and
// comes with no records, not with those decoded before the break: the
// rule FieldErrors documents for every call.
func TestBrokenPageHasNoRecords(t *testing.T) {
	c, m := newMockClient(t)
	for _, body := range []string{`[{"id": 1}, {"id": 2`, `[{"id": 1}, {"id": 2}] x`} {
		m.Reply(200, body)
		list, _, err := c.Issues.List(context.Background(), 1, nil)
		var de *DecodeError
		require.ErrorAs(t, err, &de, body)
		var fields FieldErrors
		assert.False(t, errors.As(err, &fields), body)
		assert.Nil(t, list, body)
	}
}
