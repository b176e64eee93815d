package rec

import "encoding/json"

// Plain gets both methods.
type Plain struct {
	ID    int                        `json:"id"`
	Extra map[string]json.RawMessage `json:"-"`
}

// Custom decodes itself: only MarshalJSON is generated.
type Custom struct {
	ID    int                        `json:"id"`
	Extra map[string]json.RawMessage `json:"-" jsonkeep:"self"`
}

func (c *Custom) UnmarshalJSON(b []byte) error { return nil }

// NotARecord has an Extra field of another type.
type NotARecord struct {
	Extra map[string]any
}

// Redacting writes itself: only UnmarshalJSON is generated.
type Redacting struct {
	Secret string                     `json:"secret"`
	Extra  map[string]json.RawMessage `json:"-" jsonkeep:"marshal"`
}

func (r Redacting) MarshalJSON() ([]byte, error) { return nil, nil }
