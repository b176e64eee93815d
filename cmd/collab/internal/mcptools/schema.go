package mcptools

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/collabsvc/collab"
)

// The arguments the server adds to an operation's own.
const (
	argPage     = "page"
	argPerPage  = "per_page"
	argFields   = "fields"
	argMaxBytes = "max_bytes"
)

// Defaults and bounds of the added arguments.
const (
	defaultPerPage  = 20
	maxPerPage      = 100
	defaultMaxBytes = 16 << 10
	minMaxBytes     = 256
	maxMaxBytes     = 1 << 20
)

// inputSchema is the operation's argument schema with the arguments its
// shape adds.
func (s *Spec) inputSchema() *jsonschema.Schema {
	in := s.Args.CloneSchemas()
	if in.Properties == nil {
		in.Properties = map[string]*jsonschema.Schema{}
	}
	add := func(name string, p *jsonschema.Schema) {
		in.Properties[name] = p
		in.PropertyOrder = append(in.PropertyOrder, name)
	}
	switch s.shape() {
	case shapeList:
		add(argPage, &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(1.0)})
		add(argPerPage, &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(1.0), Maximum: jsonschema.Ptr(float64(maxPerPage))})
		fallthrough
	case shapeRecord:
		add(argFields, &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"},
			Description: "fields to answer (a.b reaches into a); default: a few"})
	case shapeText:
		add(argMaxBytes, &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(float64(minMaxBytes)), Maximum: jsonschema.Ptr(float64(maxMaxBytes)),
			Description: "cut to this size, marked (default 16384)"})
	}
	return in
}

// outputSchema is the schema of the structured answer: the trimmed
// record, a page of them, or nil for text.
func (s *Spec) outputSchema() (*jsonschema.Schema, error) {
	switch s.shape() {
	case shapeText:
		return nil, nil
	case shapeDone:
		return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"done": {Type: "boolean"}}}, nil
	}
	full, err := jsonschema.ForType(s.Record, schemaOptions)
	if err != nil {
		return nil, err
	}
	rec := projectSchema(full, s.paths(nil))
	if s.shape() == shapeRecord {
		return rec, nil
	}
	page, err := jsonschema.For[Page](schemaOptions)
	if err != nil {
		return nil, err
	}
	page.Properties["items"].Items = rec
	return page, nil
}

// schemaOptions describe the SDK's value types as they encode.
var schemaOptions = &jsonschema.ForOptions{
	IgnoreInvalidTypes: true,
	TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[collab.Time]():     {Type: "string"},
		reflect.TypeFor[collab.Secret]():   {Type: "string"},
		reflect.TypeFor[json.RawMessage](): {},
	},
}

// projectSchema is the part of the object schema full that the dotted
// paths reach (all of it for nil), loosened: a call that names fields
// gets other keys, so no key is required and none is refused.
func projectSchema(full *jsonschema.Schema, paths []string) *jsonschema.Schema {
	if paths == nil {
		return loosen(full)
	}
	out := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}}
	for _, p := range paths {
		at := out
		src := full
		names := strings.Split(p, ".")
		for i, name := range names {
			sub := src.Properties[name]
			if sub == nil {
				break
			}
			if i == len(names)-1 || sub.Properties == nil {
				at.Properties[name] = loosen(sub)
				at.PropertyOrder = append(at.PropertyOrder, name)
				break
			}
			next := at.Properties[name]
			if next == nil {
				next = &jsonschema.Schema{Type: sub.Type, Types: sub.Types, Properties: map[string]*jsonschema.Schema{}}
				at.Properties[name] = next
				at.PropertyOrder = append(at.PropertyOrder, name)
			}
			at, src = next, sub
		}
	}
	return out
}

// loosen copies s without required keys or a refusal of other keys, at
// every depth.
func loosen(s *jsonschema.Schema) *jsonschema.Schema {
	c := s.CloneSchemas()
	var walk func(*jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil {
			return
		}
		s.Required, s.AdditionalProperties = nil, nil
		for _, p := range s.Properties {
			walk(p)
		}
		walk(s.Items)
		for _, a := range s.AnyOf {
			walk(a)
		}
	}
	walk(c)
	return c
}
