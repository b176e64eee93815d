package collab_test

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDocsSnippetsCompile checks that every ```go block of README.md and
// docs/*.md appears, line for line (leading white space aside), inside an
// Example or Test function of some module of the repository, so that each
// snippet a reader copies is compiled and kept up to date by the tests.
func TestDocsSnippetsCompile(t *testing.T) {
	bodies := testFuncBodies(t, ".")
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, doc := range append([]string{"README.md"}, docs...) {
		for _, s := range goSnippets(t, doc) {
			checked++
			if !strings.Contains(bodies, "\n"+s.text) {
				t.Errorf("%s:%d: this ```go block is in no Example or Test function; add one that holds it verbatim:\n%s", doc, s.line, s.text)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no ```go block found: the test looks in the wrong place")
	}
	t.Logf("%d ```go blocks checked in README.md and %d files of docs/", checked, len(docs))
}

// A snippet is one ```go block of a Markdown file, normalised.
type snippet struct {
	line int // of the opening fence
	text string
}

// goSnippets returns the ```go blocks of the Markdown file at path.
func goSnippets(t *testing.T, path string) []snippet {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []snippet
	var cur *snippet
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fence := strings.TrimSpace(line)
		switch {
		case cur == nil && fence == "```go":
			cur = &snippet{line: n}
		case cur != nil && fence == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += normalize(line) + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: a ```go block is never closed", path, cur.line)
	}
	return out
}

// testFuncBodies returns the normalised bodies of every Example and Test
// function in the _test.go files under root, nested modules included, one
// after the other.
func testFuncBodies(t *testing.T, root string) string {
	t.Helper()
	var all strings.Builder
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		return appendBodies(&all, path)
	})
	if err != nil {
		t.Fatal(err)
	}
	return all.String()
}

// appendBodies writes the normalised bodies of the Example and Test
// functions of one Go file to w.
func appendBodies(w *strings.Builder, path string) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil || fn.Recv != nil || !isDocFunc(fn.Name.Name) {
			continue
		}
		body := src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset]
		w.WriteString("\n") // a snippet starts at the start of a line
		for line := range strings.Lines(string(body)) {
			w.WriteString(normalize(line) + "\n")
		}
		w.WriteString("\x00\n") // no snippet spans two functions
	}
	return nil
}

func isDocFunc(name string) bool {
	return strings.HasPrefix(name, "Example") || strings.HasPrefix(name, "Test")
}

// normalize drops a line's leading and trailing white space.
func normalize(line string) string {
	return strings.TrimSpace(line)
}

// TestDocsSnippetCheckerFinds checks the checker itself: a snippet found in
// a Test function, one found only in a helper, and the normalisation.
func TestDocsSnippetCheckerFinds(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "doc.md")
	src := "package x\n\nfunc TestA(t *testing.T) {\n\tx := 1\n\t_ = x\n}\n\nfunc helper() {\n\ty := 2\n}\n"
	for name, text := range map[string]string{
		"doc.md":    "text\n```go\n  x := 1\n_ = x\n```\n```go\ny := 2\n```\n```sh\nz\n```\n",
		"a_test.go": src,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snips := goSnippets(t, md)
	if len(snips) != 2 || snips[0].line != 2 || snips[0].text != "x := 1\n_ = x\n" {
		t.Fatalf("goSnippets = %q", snips)
	}
	bodies := testFuncBodies(t, dir)
	if !strings.Contains(bodies, "\n"+snips[0].text) {
		t.Errorf("the snippet in TestA is not found in %q", bodies)
	}
	if strings.Contains(bodies, "\n"+snips[1].text) {
		t.Errorf("a snippet found only in a helper counts as compiled: %q", bodies)
	}
}

// TestReadmeTestCommand checks the README's first code block: the quick
// start and the one test command, which must name every module of go.work
// and be the command .ci/run runs.
func TestReadmeTestCommand(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(readme), "```")
	_, block, _ := strings.Cut(rest, "\n")
	block, _, _ = strings.Cut(block, "```")
	cmds := strings.Split(strings.TrimSpace(block), "\n")
	if len(cmds) != 2 || cmds[0] != "go run ./examples/quickstart" {
		t.Fatalf("the README's first code block is not the quick start and the test command:\n%s", block)
	}
	test := cmds[1]
	work, err := os.ReadFile("go.work")
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Fields(test)
	for _, line := range strings.Split(string(work), "\n") {
		dir := strings.TrimSpace(line)
		if !strings.HasPrefix(dir, ".") {
			continue
		}
		pattern := strings.TrimSuffix(dir, "/") + "/..."
		if dir == "." {
			pattern = "./..."
		}
		if !slices.Contains(args, pattern) {
			t.Errorf("the README's test command %q does not test the module in %s (%s)", test, dir, pattern)
		}
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(ci), "\n"), test) {
		t.Errorf(".ci/run does not run the README's test command %q", test)
	}
}
