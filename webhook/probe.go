package webhook

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/collabsvc/collab"
)

// probeIdentity reads the identity of a body of a known kind. It reports
// false when only the full decoder can tell: an unknown kind, a body that
// is not a valid JSON object, or a value of the identity in a form the
// probe does not take (a quoted number, an escaped string, a key given
// twice). The whole body is checked, so that a body the probe takes is one
// the decoder takes too.
func probeIdentity(kind Kind, body []byte) (identity, bool) {
	switch kind {
	case KindPush, KindTagPush, KindIssue, KindMergeRequest, KindNote, KindBuild, KindWikiPage:
	default:
		return identity{}, false
	}
	s := prober{data: body}
	var p probe
	if !s.object(func(key []byte) bool { return s.top(kind, key, &p) }) {
		return identity{}, false
	}
	if s.ws(); s.pos != len(s.data) {
		return identity{}, false
	}
	return p.identity(kind), true
}

// prober reads the few values of a payload that name it, and checks the
// syntax of the rest as it skips it, faster than a decoder: it neither
// decodes keys nor looks them up in a table. It gives up (false) on
// anything unusual, and the caller then decodes the body in full.
type prober struct {
	data  []byte
	pos   int
	depth int
	seen  uint16 // the identity's keys read so far, to refuse a repeat
}

// The keys of an identity, as bits of prober.seen.
const (
	seenProjectID uint16 = 1 << iota
	seenRef
	seenBefore
	seenAfter
	seenBuildID
	seenBuildStatus
	seenAttributes
	seenIssue
	seenMergeRequest
	seenID
	seenUpdatedAt
	seenNoteableType
	seenNoteableID
)

// top reads the value of a top-level key into p when it is one of kind's
// identity, else skips it.
func (s *prober) top(kind Kind, key []byte, p *probe) bool {
	switch kind {
	case KindPush, KindTagPush:
		return s.push(key, p)
	case KindBuild:
		return s.build(key, p)
	case KindIssue, KindMergeRequest, KindNote:
		return s.objectEvent(kind, key, p)
	}
	return s.value()
}

// push reads a top-level key of a push or tag push.
func (s *prober) push(key []byte, p *probe) bool {
	switch string(key) {
	case "project_id":
		return s.once(seenProjectID) && s.int(&p.ProjectID)
	case "ref":
		return s.once(seenRef) && s.str(&p.Ref)
	case "before":
		return s.once(seenBefore) && s.str(&p.Before)
	case "after":
		return s.once(seenAfter) && s.str(&p.After)
	}
	return s.value()
}

// build reads a top-level key of a build event.
func (s *prober) build(key []byte, p *probe) bool {
	switch string(key) {
	case "build_id":
		return s.once(seenBuildID) && s.int(&p.BuildID)
	case "build_status":
		return s.once(seenBuildStatus) && s.str(&p.BuildStatus)
	}
	return s.value()
}

// objectEvent reads a top-level key of an issue, merge request or note
// event.
func (s *prober) objectEvent(kind Kind, key []byte, p *probe) bool {
	switch string(key) {
	case "object_attributes":
		return s.once(seenAttributes) && s.nested(func(key []byte) bool { return s.attribute(kind, key, &p.ObjectAttributes) })
	case "issue":
		if kind == KindNote {
			return s.once(seenIssue) && s.nested(func(key []byte) bool { return s.id(key, &p.Issue.ID) })
		}
	case "merge_request":
		if kind == KindNote {
			return s.once(seenMergeRequest) && s.nested(func(key []byte) bool { return s.id(key, &p.MergeRequest.ID) })
		}
	}
	return s.value()
}

// attribute reads a key of object_attributes.
func (s *prober) attribute(kind Kind, key []byte, a *attributes) bool {
	switch string(key) {
	case "id":
		return s.once(seenID) && s.int(&a.ID)
	case "updated_at":
		if kind != KindNote {
			return s.once(seenUpdatedAt) && s.time(&a.UpdatedAt)
		}
	case "noteable_type":
		if kind == KindNote {
			return s.once(seenNoteableType) && s.str(&a.NoteableType)
		}
	case "noteable_id":
		if kind == KindNote {
			return s.once(seenNoteableID) && s.intPtr(&a.NoteableID)
		}
	}
	return s.value()
}

// id reads the id of a note's issue or merge request. The seen bit of
// object_attributes' id is not used: the object is another.
func (s *prober) id(key []byte, n *int) bool {
	if string(key) == "id" {
		return s.int(n)
	}
	return s.value()
}

// once reports whether the key of bit is read for the first time.
func (s *prober) once(bit uint16) bool {
	if s.seen&bit != 0 {
		return false
	}
	s.seen |= bit
	return true
}

// nested reads an object, or null, as a member's value.
func (s *prober) nested(member func(key []byte) bool) bool {
	if s.null() {
		return true
	}
	return s.object(member)
}

// object reads an object, calling member for each key with the position at
// its value; member reads the value.
func (s *prober) object(member func(key []byte) bool) bool {
	if s.ws(); !s.at('{') {
		return false
	}
	return s.elements('}', func() bool {
		key, ok := s.key()
		return ok && member(key)
	})
}

// array reads an array.
func (s *prober) array() bool { return s.elements(']', s.value) }

// elements reads the elements of an object or array, from its opening
// bracket to closer, with item reading each.
func (s *prober) elements(closer byte, item func() bool) bool {
	if s.depth++; s.depth > maxProbeDepth {
		return false
	}
	s.pos++
	if s.ws(); s.at(closer) {
		s.pos++
		s.depth--
		return true
	}
	for {
		if !item() {
			return false
		}
		if s.ws(); s.at(',') {
			s.pos++
			s.ws()
			continue
		}
		if !s.at(closer) {
			return false
		}
		s.pos++
		s.depth--
		return true
	}
}

// maxProbeDepth bounds nesting; the decoder reports deeper bodies.
const maxProbeDepth = 64

// key reads a key and its colon. A key with an escape, or with white space
// at its ends (which the decoder reports when it names a field), is not
// taken.
func (s *prober) key() ([]byte, bool) {
	raw, ok := s.string()
	if !ok || len(raw) < 2 || bytes.IndexByte(raw, '\\') >= 0 {
		return nil, false
	}
	key := raw[1 : len(raw)-1]
	if len(key) > 0 && (isSpace(key[0]) || isSpace(key[len(key)-1])) {
		return nil, false
	}
	if s.ws(); !s.at(':') {
		return nil, false
	}
	s.pos++
	s.ws()
	return key, true
}

func (s *prober) at(c byte) bool { return s.pos < len(s.data) && s.data[s.pos] == c }

func (s *prober) ws() {
	for s.pos < len(s.data) && isSpace(s.data[s.pos]) {
		s.pos++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// null reads a null, if one is next.
func (s *prober) null() bool {
	if bytes.HasPrefix(s.data[s.pos:], []byte("null")) {
		s.pos += 4
		return true
	}
	return false
}

// int reads an integer, or null as 0.
func (s *prober) int(n *int) bool {
	if s.null() {
		return true
	}
	start := s.pos
	if !s.number() {
		return false
	}
	v, err := strconv.Atoi(string(s.data[start:s.pos]))
	*n = v
	return err == nil
}

// intPtr reads an integer, or null as nil.
func (s *prober) intPtr(n **int) bool {
	if s.null() {
		*n = nil
		return true
	}
	v := new(int)
	*n = v
	return s.int(v)
}

// str reads a string without escapes in valid UTF-8, or null as "".
func (s *prober) str(v *string) bool {
	if s.null() {
		return true
	}
	raw, ok := s.string()
	if !ok || bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw) {
		return false
	}
	*v = string(raw[1 : len(raw)-1])
	return true
}

// time reads a time, or null as nil.
func (s *prober) time(t **collab.Time) bool {
	if s.null() {
		*t = nil
		return true
	}
	raw, ok := s.string()
	if !ok {
		return false
	}
	v := new(collab.Time)
	*t = v
	return v.UnmarshalJSON(raw) == nil
}

// value skips a value, checking its syntax.
func (s *prober) value() bool {
	if s.pos >= len(s.data) {
		return false
	}
	switch c := s.data[s.pos]; {
	case c == '"':
		_, ok := s.string()
		return ok
	case c == '{':
		return s.object(func([]byte) bool { return s.value() })
	case c == '[':
		return s.array()
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	default:
		return s.literal("true") || s.literal("false") || s.null()
	}
}

func (s *prober) literal(word string) bool {
	if bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		s.pos += len(word)
		return true
	}
	return false
}

// string reads a string and returns it with its quotes. It steps over
// eight plain bytes at a time: strings make most of a payload.
func (s *prober) string() ([]byte, bool) {
	d, start := s.data, s.pos
	if !s.at('"') {
		return nil, false
	}
	for i := start + 1; i < len(d); {
		for i < len(d) && plainByte[d[i]] {
			i++
		}
		if i >= len(d) {
			break
		}
		switch c := d[i]; {
		case c == '"':
			s.pos = i + 1
			return d[start:s.pos], true
		case c < 0x20:
			return nil, false
		case c != '\\':
			i++
		case i+1 < len(d) && bytes.IndexByte([]byte(`"\/bfnrt`), d[i+1]) >= 0:
			i += 2
		case i+5 < len(d) && d[i+1] == 'u' && isHexDigits(d[i+2:i+6]):
			i += 6
		default:
			return nil, false
		}
	}
	return nil, false
}

// plainByte marks the bytes that neither end a string nor need a closer
// look: not a quote, a backslash or a control character.
var plainByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

func isHexDigits(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// number reads a number with JSON's grammar.
func (s *prober) number() bool {
	d := s.data
	i, ok := integerEnd(d, s.pos)
	if ok && i < len(d) && d[i] == '.' {
		i, ok = someDigits(d, i+1)
	}
	if ok && i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		i, ok = someDigits(d, i)
	}
	s.pos = i
	return ok
}

// integerEnd returns the index past the integer part of a number at i, and
// whether there is one: a minus sign, then 0 or digits not led by 0.
func integerEnd(d []byte, i int) (int, bool) {
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		return i + 1, true
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		return digitsEnd(d, i), true
	}
	return i, false
}

// someDigits returns the index past the run of digits at i, and whether
// there is one: a fraction or an exponent needs a digit.
func someDigits(d []byte, i int) (int, bool) {
	j := digitsEnd(d, i)
	return j, j > i
}

// digitsEnd returns the index past the run of digits at i.
func digitsEnd(d []byte, i int) int {
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		i++
	}
	return i
}
