package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// outFile is the file genrecords writes in each package.
const outFile = "records_gen.go"

// extraType is the type of a record's Extra field, as written in source.
const extraType = "map[string]json.RawMessage"

// packageDirs lists the directories below root that hold Go files of the
// module rooted there: not testdata, hidden directories, or nested modules.
func packageDirs(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || exists(filepath.Join(path, "go.mod"))) {
			return filepath.SkipDir
		}
		if files, _ := filepath.Glob(filepath.Join(path, "*.go")); len(files) > 0 {
			dirs = append(dirs, path)
		}
		return nil
	})
	return dirs, err
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// generate returns the records_gen.go of the package in dir, or nil when
// the package has no record.
func generate(dir string) ([]byte, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, path := range paths {
		if base := filepath.Base(path); strings.HasSuffix(base, "_test.go") || base == outFile {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if len(files) > 0 && f.Name.Name != files[0].Name.Name {
			return nil, fmt.Errorf("%s: packages %s and %s", dir, files[0].Name.Name, f.Name.Name)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, nil
	}
	recs, err := scan(files)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return render(files[0].Name.Name, recs)
}

// record is a struct with an Extra field, and which of the JSON methods the
// package declares for it by hand.
type record struct {
	name                   string
	hasUnmarshal, hasMarsh bool
	extraTag               string // the jsonkeep tag of its Extra field
}

// scan finds the records of a package's files. A record with a MarshalJSON
// written by hand must tag its Extra jsonkeep:"marshal" (or "self"): the
// records holding it are written in one pass that calls only such methods,
// and would otherwise skip what its method does (a redaction, say).
func scan(files []*ast.File) ([]record, error) {
	var recs []record
	methods := map[string]bool{} // "Type.Method"
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				recs = append(recs, records(d)...)
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) == 1 {
					methods[receiverType(d.Recv.List[0].Type)+"."+d.Name.Name] = true
				}
			}
		}
	}
	for i := range recs {
		recs[i].hasUnmarshal = methods[recs[i].name+".UnmarshalJSON"]
		recs[i].hasMarsh = methods[recs[i].name+".MarshalJSON"]
		if tag := recs[i].extraTag; recs[i].hasMarsh && tag != "marshal" && tag != "self" {
			return nil, fmt.Errorf("%s has its own MarshalJSON: tag its Extra field jsonkeep:\"marshal\"", recs[i].name)
		}
	}
	slices.SortFunc(recs, func(a, b record) int { return strings.Compare(a.name, b.name) })
	return recs, nil
}

// records returns the structs of a type declaration that have an Extra
// field of type map[string]json.RawMessage.
func records(d *ast.GenDecl) []record {
	var recs []record
	for _, spec := range d.Specs {
		ts, ok := spec.(*ast.TypeSpec)
		if !ok || ts.TypeParams != nil {
			continue
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			continue
		}
		if i := slices.IndexFunc(st.Fields.List, isExtra); i >= 0 {
			recs = append(recs, record{name: ts.Name.Name, extraTag: jsonkeepTag(st.Fields.List[i])})
		}
	}
	return recs
}

// isExtra reports whether f is a record's Extra field.
func isExtra(f *ast.Field) bool {
	return len(f.Names) == 1 && f.Names[0].Name == "Extra" && types.ExprString(f.Type) == extraType
}

// jsonkeepTag returns the jsonkeep tag of field f.
func jsonkeepTag(f *ast.Field) string {
	if f.Tag == nil {
		return ""
	}
	tag, _ := strconv.Unquote(f.Tag.Value)
	return reflect.StructTag(tag).Get("jsonkeep")
}

func receiverType(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// render writes the methods of recs, formatted; nil when there is none to
// write. Go lists every method of an exported type in its documentation,
// and encoding/json needs these on the record itself (a MarshalJSON
// promoted from an embedded field cannot see the record), so each carries
// one line: the package documentation says once how records are read and
// written.
func render(pkg string, recs []record) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by genrecords; DO NOT EDIT.\n\npackage %s\n\n", pkg)
	// The field errors are returned as the root package's public type.
	errs := "FieldErrors"
	if pkg != "collab" {
		errs = "collab.FieldErrors"
		b.WriteString("import (\n\t\"github.com/collabsvc/collab\"\n")
	} else {
		b.WriteString("import (\n")
	}
	b.WriteString("\t\"github.com/collabsvc/collab/internal/jsonkeep\"\n)\n")
	n := 0
	for _, r := range recs {
		v := receiverName(r.name)
		if !r.hasUnmarshal {
			n++
			fmt.Fprintf(&b, "\n// UnmarshalJSON decodes as the client does, unknown keys into Extra.\n"+
				"func (%s *%s) UnmarshalJSON(data []byte) error {\n"+
				"\treturn jsonkeep.Public[%s](jsonkeep.Decode(data, %[1]s))\n}\n", v, r.name, errs)
		}
		if !r.hasMarsh {
			n++
			fmt.Fprintf(&b, "\n// MarshalJSON writes every field and the keys kept in Extra.\n"+
				"func (%s %s) MarshalJSON() ([]byte, error) { return jsonkeep.Encode(&%[1]s) }\n", v, r.name)
		}
	}
	if n == 0 {
		return nil, nil
	}
	return format.Source(b.Bytes())
}

// receiverName is the type's initial, lower-cased.
func receiverName(typ string) string {
	return string(unicode.ToLower([]rune(typ)[0]))
}
