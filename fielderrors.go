package collab

import (
	"fmt"
	"strings"

	"github.com/collabsvc/collab/internal/jsonkeep"
)

// FieldError is one value of a response or of a webhook payload that could
// not be decoded into its field. The raw value stays in the Extra map of the
// record that holds it, so nothing is lost.
type FieldError struct {
	Path  string // dotted path from the top of the body, e.g. merge_request.last_commit.timestamp or [3].due_date
	Value string // the raw JSON value, shortened
	Err   error  // why it did not fit, or ErrStrayKey
}

// Error returns the path, the reason and the value.
func (e *FieldError) Error() string {
	return fmt.Sprintf("%s: %v (value %s)", e.Path, e.Err, e.Value)
}

// Unwrap returns Err.
func (e *FieldError) Unwrap() error { return e.Err }

// FieldErrors lists the values of one body that did not fit their fields.
//
// It is the one rule for partial results, in the client and in the webhook
// package: when a body decodes except for some values, the call returns the
// record (or the page, or the event) with every other field set, the bad
// values kept in Extra, together with an error that wraps FieldErrors. Test
// for it with errors.As to use the partial record; any other error comes
// with no record.
type FieldErrors []*FieldError

// Error joins the errors' texts.
func (e FieldErrors) Error() string {
	parts := make([]string, len(e))
	for i, fe := range e {
		parts[i] = fe.Error()
	}
	return strings.Join(parts, "; ")
}

// ErrStrayKey is the Err of a FieldError for a key that matches a known key
// except for surrounding white space, such as "title ". Its value stays in
// Extra under that key.
var ErrStrayKey = jsonkeep.ErrStrayKey
