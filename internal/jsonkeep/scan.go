package jsonkeep

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds nesting, as encoding/json does, so that a hostile body
// cannot exhaust the stack.
const maxDepth = 10000

// scanner reads JSON from data. The first syntax error stops it; every
// method is then a no-op.
type scanner struct {
	data  []byte
	pos   int
	depth int
	err   error

	scratch []byte            // the text of the last escaped string, reused
	strs    map[string]string // the strings made so far, for text to share; nil to share none
}

// SyntaxError is malformed JSON, at a byte offset.
type SyntaxError struct {
	Offset int
	msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.msg)
}

func (s *scanner) syntax(msg string) error {
	if s.err == nil {
		s.err = &SyntaxError{Offset: s.pos, msg: msg}
	}
	return s.err
}

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) expect(c byte) bool {
	if s.err != nil {
		return false
	}
	if s.pos >= len(s.data) {
		s.syntax("unexpected end of input")
		return false
	}
	if s.data[s.pos] != c {
		s.syntax(fmt.Sprintf("expected %q, found %q", c, s.data[s.pos]))
		return false
	}
	s.pos++
	return true
}

func (s *scanner) colon() bool {
	s.ws()
	ok := s.expect(':')
	s.ws()
	return ok
}

// isNull reports whether the next value is null, without consuming it.
func (s *scanner) isNull() bool { return bytes.HasPrefix(s.data[s.pos:], []byte("null")) }

// isBlank reports whether the next value is a string of white space only,
// without consuming it.
func (s *scanner) isBlank() bool {
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		return false
	}
	for i := s.pos + 1; i < len(s.data); i++ {
		switch s.data[i] {
		case ' ', '\t', '\n', '\r':
		case '"':
			return true
		default:
			return false
		}
	}
	return false
}

// key reads an object key and returns its text; a key without escapes is
// read in place.
func (s *scanner) key() []byte {
	raw := s.rawKey()
	if s.err != nil {
		return nil
	}
	return unquote(raw)
}

// rawKey reads an object key and returns it as written, quotes included.
func (s *scanner) rawKey() []byte {
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] != '"' {
		s.syntax("expected a string key")
		return nil
	}
	return s.value()
}

// value skips one value, checking its syntax, and returns its bytes.
func (s *scanner) value() []byte {
	if s.err != nil {
		return nil
	}
	s.ws()
	start := s.pos
	if s.pos >= len(s.data) {
		s.syntax("unexpected end of input")
		return nil
	}
	switch c := s.data[s.pos]; {
	case c == '{' || c == '[':
		s.compound(c)
	case c == '"':
		s.str()
	case c == '-' || '0' <= c && c <= '9':
		s.number()
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	default:
		s.syntax(fmt.Sprintf("unexpected %q", c))
	}
	if s.err != nil {
		return nil
	}
	return s.data[start:s.pos]
}

func (s *scanner) compound(open byte) {
	if s.depth++; s.depth > maxDepth {
		s.syntax("nested too deeply")
		return
	}
	defer func() { s.depth-- }()
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	s.pos++
	s.ws()
	if s.pos < len(s.data) && s.data[s.pos] == closer {
		s.pos++
		return
	}
	for s.err == nil {
		if open == '{' {
			if s.rawKey(); !s.colon() { // a key skipped need not be unquoted
				return
			}
		}
		s.value()
		s.ws()
		if s.pos < len(s.data) && s.data[s.pos] == ',' {
			s.pos++
			s.ws()
			continue
		}
		s.expect(closer)
		return
	}
}

func (s *scanner) literal(word string) {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		s.syntax("invalid literal")
		return
	}
	s.pos += len(word)
}

func (s *scanner) str() {
	i := s.pos + 1
	for i < len(s.data) {
		for i < len(s.data) && plainByte[s.data[i]] {
			i++ // most of a string: no need for the switch
		}
		if i == len(s.data) {
			break
		}
		c := s.data[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return
		case c < 0x20:
			s.pos = i
			s.syntax("control character in string")
			return
		case c == '\\':
			i++
			if i >= len(s.data) {
				break
			}
			switch s.data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if i+4 >= len(s.data) || !isHex(s.data[i+1:i+5]) {
					s.pos = i
					s.syntax("invalid \\u escape")
					return
				}
				i += 5
			default:
				s.pos = i
				s.syntax("invalid escape")
				return
			}
		default:
			i++
		}
	}
	s.pos = len(s.data)
	s.syntax("unterminated string")
}

// plainByte marks the bytes that neither end a string nor need a closer
// look: not a quote, a backslash or a control character.
var plainByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

func isHex(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// number skips a number with JSON's grammar.
func (s *scanner) number() {
	d, i := s.data, s.pos
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		s.pos = i
		s.syntax("invalid number")
		return
	}
	if i < len(d) && d[i] == '.' {
		if i = s.digits(i + 1); i < 0 {
			return
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i = s.digits(i); i < 0 {
			return
		}
	}
	s.pos = i
}

// digits returns the index past the run of digits at i, or -1 with a syntax
// error when there is none: a fraction or an exponent needs one.
func (s *scanner) digits(i int) int {
	d := s.data
	if i >= len(d) || !isDigit(d[i]) {
		s.pos = i
		s.syntax("invalid number")
		return -1
	}
	for i < len(d) && isDigit(d[i]) {
		i++
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// unquote returns the text of a checked JSON string: in place when it has
// no escape and its UTF-8 is valid, else in a new slice.
func unquote(raw []byte) []byte {
	in := raw[1 : len(raw)-1]
	if plainText(in) {
		return in
	}
	return appendText(nil, in)
}

// plainText reports whether the content of a checked string is its text:
// no escape, and valid UTF-8.
func plainText(in []byte) bool { return bytes.IndexByte(in, '\\') < 0 && utf8.Valid(in) }

// appendText appends the text of in, the content of a checked string, as
// encoding/json reads it: escapes resolved, and each byte of invalid UTF-8
// and each lone surrogate replaced by U+FFFD.
func appendText(dst, in []byte) []byte {
	for i := 0; i < len(in); {
		switch c := in[i]; {
		case c == '\\':
			var n int
			dst, n = appendEscape(dst, in[i:])
			i += n
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, n := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && n == 1 {
				dst = utf8.AppendRune(dst, r)
			} else {
				dst = append(dst, in[i:i+n]...)
			}
			i += n
		}
	}
	return dst
}

// appendEscape appends what the checked escape at the start of in stands
// for, and returns how many bytes of in it took: a \u escape of a high
// surrogate takes the low one after it too.
func appendEscape(dst, in []byte) ([]byte, int) {
	switch c := in[1]; c {
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'u':
	default: // " \ /
		return append(dst, c), 2
	}
	r := hex4(in[2:6])
	if !utf16.IsSurrogate(r) {
		return utf8.AppendRune(dst, r), 6
	}
	if len(in) >= 12 && in[6] == '\\' && in[7] == 'u' {
		if pair := utf16.DecodeRune(r, hex4(in[8:12])); pair != utf8.RuneError {
			return utf8.AppendRune(dst, pair), 12
		}
	}
	return utf8.AppendRune(dst, utf8.RuneError), 6
}

// hex4 reads four checked hex digits.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// text returns the text of the checked string raw: a string shared with an
// equal one this decoding made before, when it is short, and a new one
// otherwise. Strings repeat within a payload (a project's name and URLs in
// both a source and a target, an author across a page of issues); sharing
// them saves an allocation each, and retains nothing beyond the text.
func (s *scanner) text(raw []byte) string {
	in := raw[1 : len(raw)-1]
	if !plainText(in) {
		s.scratch = appendText(s.scratch[:0], in)
		in = s.scratch
	}
	if len(in) <= 1 || len(in) > maxShared || s.strs == nil {
		return string(in) // a string of one byte costs no allocation
	}
	if str, ok := s.strs[string(in)]; ok {
		return str
	}
	str := string(in)
	if len(s.strs) < maxSharedStrings {
		s.strs[str] = str
	}
	return str
}

// maxShared is the length of the longest string text shares, and
// maxSharedStrings how many it remembers in one decoding: longer strings
// (descriptions, messages) seldom repeat.
const (
	maxShared        = 96
	maxSharedStrings = 512
)

// scalarText is the text of a scalar: a string's content with surrounding
// white space removed, or a literal as it is.
func scalarText(raw []byte) []byte {
	if raw[0] == '"' {
		return bytes.TrimSpace(unquote(raw))
	}
	return raw
}

var errNotBool = errors.New("not a boolean")

// parseBool reads the flags the server sends: true, 1, "true", "1", "t",
// "on", "yes", and their opposites, in any case; "" is false.
func parseBool(raw []byte) (bool, error) {
	s := scalarText(raw)
	var word [5]byte // the longest word, "false", lower-cased
	if len(s) > len(word) {
		return false, errNotBool
	}
	for i, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		word[i] = c
	}
	switch string(word[:len(s)]) {
	case "true", "1", "t", "on", "yes":
		return true, nil
	case "false", "0", "f", "off", "no", "":
		return false, nil
	}
	return false, errNotBool
}

var errNotInt = errors.New("not an integer")

// parseInt reads an integer sent as a number or a string, with an optional
// sign; "" is 0.
func parseInt(raw []byte, bits int) (int64, error) {
	s := scalarText(raw)
	if len(s) == 0 {
		return 0, nil
	}
	neg := s[0] == '-'
	if neg || s[0] == '+' {
		s = s[1:]
	}
	if len(s) == 0 {
		return 0, errNotInt
	}
	limit := uint64(1) << (bits - 1)
	var n uint64
	for _, c := range s {
		if !isDigit(c) || n > limit/10 {
			return 0, errNotInt
		}
		n = n*10 + uint64(c-'0')
		if n > limit {
			return 0, fmt.Errorf("integer out of range for %d bits", bits)
		}
	}
	if !neg && n == limit {
		return 0, fmt.Errorf("integer out of range for %d bits", bits)
	}
	if neg {
		return -int64(n), nil
	}
	return int64(n), nil
}

func parseUint(raw []byte, bits int) (uint64, error) {
	s := scalarText(raw)
	if len(s) == 0 {
		return 0, nil
	}
	v, err := strconv.ParseUint(string(s), 10, bits)
	if err != nil {
		return 0, errNotInt
	}
	return v, nil
}

func parseFloat(raw []byte, bits int) (float64, error) {
	s := scalarText(raw)
	if len(s) == 0 {
		return 0, nil
	}
	if raw[0] == '"' && !isNumber(s) {
		return 0, errors.New("not a number")
	}
	v, err := strconv.ParseFloat(string(s), bits)
	if err != nil {
		return 0, errors.New("not a number")
	}
	return v, nil
}

// isNumber reports whether s is exactly one JSON number.
func isNumber(s []byte) bool {
	if len(s) == 0 || s[0] != '-' && !isDigit(s[0]) {
		return false
	}
	n := scanner{data: s}
	n.number()
	return n.err == nil && n.pos == len(s)
}

// CountElements counts the elements of the JSON array data: 0 when data is
// not an array, and those before the first syntax error in a malformed one.
// It allocates nothing, so that a caller can weigh a list before decoding it.
func CountElements(data []byte) int {
	s := scanner{data: data}
	s.ws()
	if s.pos >= len(data) || data[s.pos] != '[' {
		return 0
	}
	s.pos++
	s.ws()
	if s.pos < len(data) && data[s.pos] == ']' {
		return 0
	}
	n := 0
	for s.value() != nil {
		n++
		s.ws()
		if s.pos >= len(data) || data[s.pos] != ',' {
			break
		}
		s.pos++
	}
	return n
}
