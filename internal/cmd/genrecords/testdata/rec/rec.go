package rec

import "github.com/collabsvc/collab"

// Plain gets both methods.
type Plain struct {
	ID int `json:"id"`
	collab.Extras
}

// Custom decodes itself: only MarshalJSON is generated.
type Custom struct {
	ID int `json:"id"`
	collab.Extras
}

func (c *Custom) UnmarshalJSON(b []byte) error { return nil }

// NotARecord has a plain Extra field and no Extras.
type NotARecord struct {
	Extra map[string]any
}
