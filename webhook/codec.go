package webhook

import "github.com/collabsvc/collab/internal/jsonkeep"

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (u *User) UnmarshalJSON(data []byte) error { return jsonkeep.Decode(data, u, &u.Extra, &u.fields) }

// MarshalJSON writes the keys it was decoded from, or every field.
func (u User) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&u, u.Extra, u.fields) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (i *IssueEvent) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, i, &i.Extra, &i.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (i IssueEvent) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&i, i.Extra, i.fields) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (i *IssueAttributes) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, i, &i.Extra, &i.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (i IssueAttributes) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&i, i.Extra, i.fields) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (m *MergeRequestEvent) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, m, &m.Extra, &m.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (m MergeRequestEvent) MarshalJSON() ([]byte, error) {
	return jsonkeep.Encode(&m, m.Extra, m.fields)
}

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (m *MergeRequestAttributes) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, m, &m.Extra, &m.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (m MergeRequestAttributes) MarshalJSON() ([]byte, error) {
	return jsonkeep.Encode(&m, m.Extra, m.fields)
}

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (n *NoteEvent) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, n, &n.Extra, &n.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (n NoteEvent) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&n, n.Extra, n.fields) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (n *NoteAttributes) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, n, &n.Extra, &n.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (n NoteAttributes) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&n, n.Extra, n.fields) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (s *StDiff) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, s, &s.Extra, &s.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (s StDiff) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&s, s.Extra, s.fields) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (n *NotePosition) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, n, &n.Extra, &n.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (n NotePosition) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&n, n.Extra, n.fields) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (s *Snippet) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, s, &s.Extra, &s.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (s Snippet) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&s, s.Extra, s.fields) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (b *BuildEvent) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, b, &b.Extra, &b.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (b BuildEvent) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&b, b.Extra, b.fields) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (b *BuildUser) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, b, &b.Extra, &b.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (b BuildUser) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&b, b.Extra, b.fields) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (p *Pipeline) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, p, &p.Extra, &p.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (p Pipeline) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&p, p.Extra, p.fields) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (w *WikiPageEvent) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, w, &w.Extra, &w.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (w WikiPageEvent) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&w, w.Extra, w.fields) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (w *Wiki) UnmarshalJSON(data []byte) error { return jsonkeep.Decode(data, w, &w.Extra, &w.fields) }

// MarshalJSON writes the keys it was decoded from, or every field.
func (w Wiki) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&w, w.Extra, w.fields) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (w *WikiPageAttributes) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, w, &w.Extra, &w.fields)
}

// MarshalJSON writes the keys it was decoded from, or every field.
func (w WikiPageAttributes) MarshalJSON() ([]byte, error) {
	return jsonkeep.Encode(&w, w.Extra, w.fields)
}
