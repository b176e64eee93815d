// Package jsonkeeptest helps tests check that records keep the keys they
// have no field for.
package jsonkeeptest

import "encoding/json"

// UnknownKey is the key WithKeyEverywhere adds: no record has a field for it.
const UnknownKey = "zz_unknown_key"

// WithKeyEverywhere returns v, JSON decoded into any, with UnknownKey added
// to every object, holding an object of its own.
func WithKeyEverywhere(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := map[string]any{UnknownKey: map[string]any{"kept": []any{json.Number("1"), "two", nil}}}
		for k, e := range v {
			m[k] = WithKeyEverywhere(e)
		}
		return m
	case []any:
		a := make([]any, len(v))
		for i, e := range v {
			a[i] = WithKeyEverywhere(e)
		}
		return a
	}
	return v
}
