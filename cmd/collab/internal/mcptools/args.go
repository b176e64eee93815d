package mcptools

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// checkArgs checks a call's arguments, as decoded with numbers kept
// exact, against the tool's input schema: an object of strings, integers,
// booleans and lists of strings, some required, some with a closed set of
// values or bounds. Each error names the argument.
func checkArgs(in *jsonschema.Schema, args map[string]any) error {
	for _, name := range in.Required {
		if _, ok := args[name]; !ok {
			return argError(name, "required")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(args)) {
		p := in.Properties[name]
		if p == nil {
			return argError(name, "unknown; the arguments are "+strings.Join(slices.Sorted(maps.Keys(in.Properties)), ", "))
		}
		if reason := checkValue(p, args[name]); reason != "" {
			return argError(name, reason)
		}
	}
	return nil
}

// checkValue says what is wrong with v for schema p, or "".
func checkValue(p *jsonschema.Schema, v any) string {
	switch p.Type {
	case "string":
		s, ok := v.(string)
		if !ok {
			return fmt.Sprintf("want a string, not %s", show(v))
		}
		if len(p.Enum) > 0 && !slices.Contains(p.Enum, any(s)) {
			return fmt.Sprintf("want one of %s, not %q", enumText(p.Enum), s)
		}
	case "integer":
		n, err := toInt(v)
		if err != nil {
			return fmt.Sprintf("want a whole number, not %s", show(v))
		}
		if (p.Minimum != nil && float64(n) < *p.Minimum) || (p.Maximum != nil && float64(n) > *p.Maximum) {
			return fmt.Sprintf("want a whole number %s, not %d", bounds(p), n)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Sprintf("want true or false, not %s", show(v))
		}
	case "array":
		list, ok := v.([]any)
		if !ok {
			return fmt.Sprintf("want a list of strings, not %s", show(v))
		}
		for _, e := range list {
			if p.Items != nil && checkValue(p.Items, e) != "" {
				return fmt.Sprintf("want a list of strings %s, not one holding %s", itemsText(p.Items), show(e))
			}
		}
	}
	return ""
}

// itemsText says what a list's items may be.
func itemsText(items *jsonschema.Schema) string {
	if len(items.Enum) > 0 {
		return "each one of " + enumText(items.Enum)
	}
	return ""
}

// show is v as JSON, for an error.
func show(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(raw)
}

func enumText(values []any) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}

func bounds(p *jsonschema.Schema) string {
	num := func(f *float64) string { return strconv.FormatFloat(*f, 'f', -1, 64) }
	switch {
	case p.Minimum != nil && p.Maximum != nil:
		return "from " + num(p.Minimum) + " to " + num(p.Maximum)
	case p.Minimum != nil:
		return "of at least " + num(p.Minimum)
	}
	return "of at most " + num(p.Maximum)
}
