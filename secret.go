package collab

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/collabsvc/collab/internal/wire"
)

// Redacted is what a Secret prints instead of its value, and what replaces
// a credential in the text of the SDK's errors.
const Redacted = wire.Marker

// Secret is a credential that a record carries: a user's private token, a
// project's runners token, a runner's or a build's token. string(s) is the
// value, to be sent where it is due.
//
// Printing a Secret with any fmt verb, String, GoString or slog, and
// encoding it as JSON or text, shows Redacted (or nothing, for an empty
// one), so that a record printed, logged or encoded whole leaks none.
// Decoding reads the value the server sent. To keep a credential on
// purpose (a cache, a config file), store string(s) yourself: a record
// encoded and decoded again holds Redacted in its place.
type Secret string

// String returns Redacted, or "" for an empty secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return Redacted
}

// GoString returns what String returns, quoted: %#v shows no value either.
func (s Secret) GoString() string { return fmt.Sprintf("%q", s.String()) }

// Format writes String for every verb, so that %x or %q show no value.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, s.GoString())
		return
	}
	_, _ = io.WriteString(f, s.String())
}

// MarshalText returns String, which JSON, XML and most other encoders
// write in place of the value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// LogValue logs String.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Redact returns text with every occurrence of the secret replaced by
// Redacted, also in the URL-, path- and HTML-escaped forms a server
// may echo it in: the redaction the client applies to its own errors. A
// secret shorter than 8 bytes is replaced only where it stands whole, not
// followed or preceded by a letter, a digit, '-' or '_', so that the words
// that merely hold its letters read as they came.
func (s Secret) Redact(text string) string { return wire.Redact(text, []string{string(s)}) }
