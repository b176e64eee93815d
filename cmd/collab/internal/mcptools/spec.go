// Package mcptools serves the collab command's operations as MCP tools:
// one tool per operation, grouped into toolsets by noun, with answers sized
// for a model's context.
package mcptools

import (
	"context"
	"io"
	"iter"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/collabsvc/collab"
)

// Spec is what the server needs of one operation. FromOps fills it from
// the operations' definitions; nothing in it is written twice.
type Spec struct {
	Name        string // the tool's name: noun_verb
	Toolset     string // the noun, which groups tools
	Description string

	Writes      bool // false: the tool only reads
	Destructive bool // a write that deletes or overwrites what it cannot restore
	Idempotent  bool // repeating it with the same arguments changes nothing more

	// Args is the schema of the operation's own arguments (an object);
	// the server adds page and per_page, fields or max_bytes by what the
	// operation answers.
	Args *jsonschema.Schema
	// Record is the struct type of the records it answers, nil for text or
	// nothing; List says it answers many.
	Record reflect.Type
	List   bool
	// Fields are the JSON names of a trimmed record, dotted to reach into
	// an object ("author.username").
	Fields []string

	// Run performs a call with the arguments as decoded JSON (numbers as
	// json.Number).
	Run func(ctx context.Context, c *collab.Client, args map[string]any) (Result, error)
}

// Result is what Run returns: one of Record, Items or Write, or none.
type Result struct {
	Record any                   // a pointer to a Spec.Record value
	Items  iter.Seq2[any, error] // the records of a list, pages fetched as pulled
	Write  func(io.Writer) error // text: a trace, a diff
}

// shape is what a tool answers, by its spec.
type shape int

const (
	shapeDone shape = iota
	shapeRecord
	shapeList
	shapeText
)

// shape tells what s answers. An operation without a record answers text
// when it writes nothing, and nothing when it does (a delete).
func (s *Spec) shape() shape {
	switch {
	case s.Record != nil && s.List:
		return shapeList
	case s.Record != nil:
		return shapeRecord
	case !s.Writes:
		return shapeText
	}
	return shapeDone
}
