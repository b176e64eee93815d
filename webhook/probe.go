package webhook

import (
	"bytes"
	"unicode/utf8"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/jsonkeep"
)

// probeIdentity reads the identity of a body of a known kind. It reports
// false when only the full decoder can tell: an unknown kind, a body that
// is not a valid JSON object, or a value of the identity in a form the
// probe does not take (an escaped string, a key given twice). The whole body is checked, so that a body the probe takes is one
// the decoder takes too.
func probeIdentity(kind Kind, body []byte) (identity, bool) {
	switch kind {
	case KindPush, KindTagPush, KindIssue, KindMergeRequest, KindNote, KindBuild, KindWikiPage:
	default:
		return identity{}, false
	}
	s := prober{Probe: jsonkeep.NewProbe(body)}
	var p probe
	if !s.Object(func(key []byte) bool { return s.top(kind, key, &p) }) || !s.End() {
		return identity{}, false
	}
	return p.identity(kind), true
}

// prober reads the values of a payload that make its identity, and skips
// the rest.
type prober struct {
	*jsonkeep.Probe
	seen uint16 // the identity's keys read so far, to refuse a repeat
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
	return s.Skip()
}

// push reads a top-level key of a push or tag push.
func (s *prober) push(key []byte, p *probe) bool {
	switch string(key) {
	case "project_id":
		return s.once(seenProjectID) && s.Int(&p.ProjectID)
	case "ref":
		return s.once(seenRef) && s.str(&p.Ref)
	case "before":
		return s.once(seenBefore) && s.str(&p.Before)
	case "after":
		return s.once(seenAfter) && s.str(&p.After)
	}
	return s.Skip()
}

// build reads a top-level key of a build event.
func (s *prober) build(key []byte, p *probe) bool {
	switch string(key) {
	case "build_id":
		return s.once(seenBuildID) && s.Int(&p.BuildID)
	case "build_status":
		return s.once(seenBuildStatus) && s.str(&p.BuildStatus)
	}
	return s.Skip()
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
	return s.Skip()
}

// attribute reads a key of object_attributes.
func (s *prober) attribute(kind Kind, key []byte, a *attributes) bool {
	switch string(key) {
	case "id":
		return s.once(seenID) && s.Int(&a.ID)
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
	return s.Skip()
}

// id reads the id of a note's issue or merge request. The seen bit of
// object_attributes' id is not used: the object is another.
func (s *prober) id(key []byte, n *int) bool {
	if string(key) == "id" {
		return s.Int(n)
	}
	return s.Skip()
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
	return s.Null() || s.Object(member)
}

// intPtr reads an integer, or null as nil.
func (s *prober) intPtr(n **int) bool {
	if s.Null() {
		*n = nil
		return true
	}
	v := new(int)
	*n = v
	return s.Int(v)
}

// str reads a string without escapes in valid UTF-8, or null as "".
func (s *prober) str(v *string) bool {
	if s.Null() {
		return true
	}
	raw, ok := s.String()
	if !ok || bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw) {
		return false
	}
	*v = string(raw[1 : len(raw)-1])
	return true
}

// time reads a time, or null as nil.
func (s *prober) time(t **collab.Time) bool {
	if s.Null() {
		*t = nil
		return true
	}
	raw, ok := s.String()
	if !ok {
		return false
	}
	v := new(collab.Time)
	*t = v
	return v.UnmarshalJSON(raw) == nil
}
