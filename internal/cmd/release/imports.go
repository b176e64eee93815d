package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// internalCrossings lists the imports of an internal package of one module
// by another module's files. The go command allows them, as its rule is
// by import path, but no version of either module covers such a contract.
func internalCrossings(t *tree) ([]string, error) {
	dirs := map[string]string{} // module dir → path
	for _, m := range t.modules {
		dirs[m.Dir] = m.Path
	}
	var found []string
	fset := token.NewFileSet()
	for _, file := range t.files {
		from, ok := dirs[t.owner(file)]
		if !ok || !strings.HasSuffix(file, ".go") || slices.Contains(strings.Split(file, "/"), "testdata") {
			continue
		}
		src, err := t.read(file)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, file, src, parser.ImportsOnly)
		if err != nil {
			return nil, err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if to := owningModule(t.modules, p); to != "" && to != from && isInternal(p) {
				found = append(found, fmt.Sprintf("%s (module %s) imports %s (module %s)", file, from, p, to))
			}
		}
	}
	return found, nil
}

// owningModule returns the path of the module among mods whose path is the
// longest prefix of the package path p, or "".
func owningModule(mods []module, p string) string {
	best := ""
	for _, m := range mods {
		if (p == m.Path || strings.HasPrefix(p, m.Path+"/")) && len(m.Path) > len(best) {
			best = m.Path
		}
	}
	return best
}

func isInternal(p string) bool {
	return slices.Contains(strings.Split(p, "/"), "internal")
}
