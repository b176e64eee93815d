package main

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
)

// reportSurface prints the exported API that m's first release freezes: a
// count per package, or with -v every declaration.
func (r *release) reportSurface(m module) error {
	byPkg, err := surface(r.t, m)
	if err != nil {
		return err
	}
	pkgs := slices.Sorted(maps.Keys(byPkg))
	total := 0
	for _, decls := range byPkg {
		total += len(decls)
	}
	how := "by package; -v lists them"
	if r.verbose {
		how = "each"
	}
	r.logf("%s: no release yet; %s freezes these %d exported declarations (%s):", m.Path, r.version, total, how)
	for _, p := range pkgs {
		if !r.verbose {
			r.logf("  %s: %d", p, len(byPkg[p]))
			continue
		}
		for _, d := range byPkg[p] {
			r.logf("  %s", d)
		}
	}
	return nil
}

// surface lists the exported declarations of m's importable packages, by
// import path, each sorted: "package.Name", "package.Type.Method".
func surface(t *tree, m module) (map[string][]string, error) {
	byDir := map[string][]string{}
	for _, f := range t.moduleFiles(m.Dir) {
		parts := strings.Split(f, "/")
		if strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") &&
			!slices.Contains(parts, "testdata") && !slices.Contains(parts, "internal") {
			byDir[path.Dir(f)] = append(byDir[path.Dir(f)], f)
		}
	}
	byPkg := map[string][]string{}
	for dir, files := range byDir {
		pkg, err := docPackage(t, files, importPath(m, dir))
		if err != nil {
			return nil, err
		}
		if pkg != nil {
			decls := declNames(pkg)
			sort.Strings(decls)
			byPkg[pkg.ImportPath] = decls
		}
	}
	return byPkg, nil
}

// docPackage parses a package's files; nil for a command.
func docPackage(t *tree, files []string, importPath string) (*doc.Package, error) {
	fset := token.NewFileSet()
	var asts []*ast.File
	for _, f := range files {
		src, err := t.read(f)
		if err != nil {
			return nil, err
		}
		file, err := parser.ParseFile(fset, f, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		if file.Name.Name == "main" {
			return nil, nil
		}
		asts = append(asts, file)
	}
	return doc.NewFromFiles(fset, asts, importPath)
}

// declNames names a package's exported declarations.
func declNames(p *doc.Package) []string {
	var out []string
	add := func(names ...string) {
		for _, n := range names {
			out = append(out, p.ImportPath+"."+n)
		}
	}
	for _, v := range append(p.Consts, p.Vars...) {
		add(v.Names...)
	}
	for _, f := range p.Funcs {
		add(f.Name)
	}
	for _, typ := range p.Types {
		add(typ.Name)
		for _, v := range append(typ.Consts, typ.Vars...) {
			add(v.Names...)
		}
		for _, f := range typ.Funcs {
			add(f.Name)
		}
		for _, f := range typ.Methods {
			add(typ.Name + "." + f.Name)
		}
	}
	return out
}

// importPath returns the import path of the package in dir, inside m.
func importPath(m module, dir string) string {
	if dir == m.Dir {
		return m.Path
	}
	return m.Path + "/" + strings.TrimPrefix(dir, m.Dir+"/")
}
