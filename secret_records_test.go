package collab_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"log/slog"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/collabsvc/collab"
	"github.com/collabsvc/collab/internal/secretkeys"
	"github.com/collabsvc/collab/runner"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// credential starts every value fillSecrets puts in a record.
const credential = "credential-value-"

// TestNoRecordEncodesASecret: json.Marshal, and slog's JSON and text
// handlers, of every record that holds a Secret show none of its values.
// The records are found by reflection over every type the clients take and
// return, so a record that gains a Secret is checked with no edit here.
func TestNoRecordEncodesASecret(t *testing.T) {
	records := secretkeys.Records()
	for _, want := range []reflect.Type{reflect.TypeFor[collab.UserDetails](), reflect.TypeFor[collab.Project](),
		reflect.TypeFor[runner.Build](), reflect.TypeFor[runner.Registration]()} {
		require.Contains(t, records, want, "the walk finds the records known to hold a credential")
	}
	for _, rt := range records {
		t.Run(rt.String(), func(t *testing.T) {
			v := reflect.New(rt)
			n := 0
			fillSecrets(v.Elem(), &n, 0)
			require.Positive(t, n, "a credential set in the record")
			b, err := json.Marshal(v.Interface())
			require.NoError(t, err)
			var logs bytes.Buffer
			for _, h := range []slog.Handler{slog.NewJSONHandler(&logs, nil), slog.NewTextHandler(&logs, nil)} {
				slog.New(h).Info("record", "pointer", v.Interface(), "value", v.Elem().Interface())
			}
			for _, out := range []string{string(b), logs.String()} {
				assert.NotContains(t, out, credential)
				assert.Contains(t, out, collab.Redacted)
			}
		})
	}
}

// fillSecrets sets every Secret that v can hold to a value of its own,
// making the pointers, and one element of the slices, that lead to one.
func fillSecrets(v reflect.Value, n *int, depth int) {
	if depth > 4 || !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.String:
		if v.Type() == reflect.TypeFor[collab.Secret]() {
			*n++
			v.SetString(credential + strconv.Itoa(*n))
		}
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fillSecrets(v.Elem(), n, depth+1)
	case reflect.Slice:
		if v.Len() == 0 {
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		}
		fillSecrets(v.Index(0), n, depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			fillSecrets(v.Field(i), n, depth+1)
		}
	}
}

// TestEverySecretIsFound: each exported struct of the root and runner
// packages that declares a Secret field is among the records the walk
// finds, so that none escapes the recorder and the test above.
func TestEverySecretIsFound(t *testing.T) {
	found := map[string]bool{}
	for _, rt := range secretkeys.Records() {
		found[rt.String()] = true
	}
	for pkg, dir := range map[string]string{"collab": ".", "runner": "runner"} {
		paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, path := range paths {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				if st, isStruct := ts.Type.(*ast.StructType); isStruct && ts.Name.IsExported() {
					for _, fd := range st.Fields.List {
						if typ := types.ExprString(fd.Type); typ == "Secret" || typ == "collab.Secret" {
							assert.True(t, found[pkg+"."+ts.Name.Name], "%s.%s holds a Secret the walk does not find", pkg, ts.Name.Name)
						}
					}
				}
				return true
			})
		}
	}
}
