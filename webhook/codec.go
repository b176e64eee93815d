package webhook

import "github.com/collabsvc/collab/internal/jsonkeep"

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (u *User) UnmarshalJSON(data []byte) error { return jsonkeep.Decode(data, u) }

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (u User) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&u) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (i *IssueEvent) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, i)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (i IssueEvent) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&i) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (i *IssueAttributes) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, i)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (i IssueAttributes) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&i) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (m *MergeRequestEvent) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, m)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (m MergeRequestEvent) MarshalJSON() ([]byte, error) {
	return jsonkeep.Encode(&m)
}

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (m *MergeRequestAttributes) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, m)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (m MergeRequestAttributes) MarshalJSON() ([]byte, error) {
	return jsonkeep.Encode(&m)
}

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (n *NoteEvent) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, n)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (n NoteEvent) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&n) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (n *NoteAttributes) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, n)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (n NoteAttributes) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&n) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (s *StDiff) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, s)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (s StDiff) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&s) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (n *NotePosition) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, n)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (n NotePosition) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&n) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (s *Snippet) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, s)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (s Snippet) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&s) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (b *BuildEvent) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, b)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (b BuildEvent) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&b) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (b *BuildEventUser) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, b)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (b BuildEventUser) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&b) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (p *Pipeline) UnmarshalJSON(data []byte) error {
	return jsonkeep.Decode(data, p)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (p Pipeline) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&p) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (w *WikiPageEvent) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, w)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (w WikiPageEvent) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&w) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (w *Wiki) UnmarshalJSON(data []byte) error { return jsonkeep.Decode(data, w) }

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (w Wiki) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&w) }

// UnmarshalJSON keeps unknown keys in Extra and reports a value that does
// not fit its field by its path, after decoding the rest.
func (w *WikiPageAttributes) UnmarshalJSON(b []byte) error {
	return jsonkeep.Decode(b, w)
}

// MarshalJSON writes the keys it was decoded from and the fields set since,
// or every field of a value built in code.
func (w WikiPageAttributes) MarshalJSON() ([]byte, error) {
	return jsonkeep.Encode(&w)
}
