// Package jsonkeeptest helps tests check that records keep the keys they
// have no field for.
package jsonkeeptest

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/collabsvc/collab/internal/wire"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

// RecordTypes returns the names of the records declared in the non-test Go
// files of dir: the exported structs with a field
// Extra map[string]json.RawMessage, and the exported types defined as one
// of them. A test lists them so that a new record cannot be left out.
func RecordTypes(dir string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var records []string
	defined := map[string]string{} // type name -> the type it is defined as
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || !ts.Name.IsExported() {
				return true
			}
			switch typ := ts.Type.(type) {
			case *ast.StructType:
				if slices.ContainsFunc(typ.Fields.List, isExtra) {
					records = append(records, ts.Name.Name)
				}
			case *ast.Ident:
				defined[ts.Name.Name] = typ.Name
			}
			return true
		})
	}
	for name, of := range defined {
		if slices.Contains(records, of) {
			records = append(records, name)
		}
	}
	return records, nil
}

func isExtra(f *ast.Field) bool {
	return len(f.Names) == 1 && f.Names[0].Name == "Extra" && types.ExprString(f.Type) == "map[string]json.RawMessage"
}

// AssertPlainValue decodes body with json.Unmarshal into a new value of the
// type want points to, and checks that it equals want under testify,
// cmp.Diff and reflect.DeepEqual, that both encode to the same JSON, and
// that the encoding decodes to an equal value again. It returns the
// decoded value and its encoding, for the caller's checks of the keys.
func AssertPlainValue(t *testing.T, want any, body []byte) (got any, out []byte) {
	t.Helper()
	got = reflect.New(reflect.TypeOf(want).Elem()).Interface()
	require.NoError(t, json.Unmarshal(body, got))
	AssertSame(t, want, got)
	out, err := json.Marshal(got)
	require.NoError(t, err)
	wantJSON, err := json.Marshal(want)
	require.NoError(t, err)
	assert.Equal(t, string(wantJSON), string(out), "equal values encode the same")
	AssertReadsBack(t, got, out, json.Unmarshal)
	return got, out
}

// AssertReadsBack decodes out, the encoding of got, with unmarshal into a
// new value of got's type, and checks that it equals got. A credential is
// encoded redacted, so a value whose encoding holds wire.Marker reads back
// with the marker in its place: then the check is that reading back once
// more changes nothing.
func AssertReadsBack(t *testing.T, got any, out []byte, unmarshal func([]byte, any) error) {
	t.Helper()
	again := reflect.New(reflect.TypeOf(got).Elem()).Interface()
	require.NoError(t, unmarshal(out, again))
	if !bytes.Contains(out, []byte(wire.Marker)) {
		AssertSame(t, got, again)
		return
	}
	b, err := json.Marshal(again)
	require.NoError(t, err)
	third := reflect.New(reflect.TypeOf(got).Elem()).Interface()
	require.NoError(t, unmarshal(b, third))
	AssertSame(t, again, third)
}

// AssertSame checks that want and got are equal under testify, cmp.Diff
// with no options and reflect.DeepEqual.
func AssertSame(t *testing.T, want, got any) {
	t.Helper()
	assert.Equal(t, want, got)
	assert.Empty(t, cmp.Diff(want, got))
	assert.True(t, reflect.DeepEqual(want, got), "reflect.DeepEqual")
}

// AssertEveryRecordHasACase checks that each record type RecordTypes finds
// in dir is among the names of a test's cases.
func AssertEveryRecordHasACase(t *testing.T, dir string, cases []string) {
	t.Helper()
	records, err := RecordTypes(dir)
	require.NoError(t, err)
	require.NotEmpty(t, records)
	for _, name := range records {
		assert.Contains(t, cases, name, "no case for this record type")
	}
}
