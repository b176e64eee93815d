package ops

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/collabsvc/collab"
)

// sdkMethods lists every exported method of the services of *collab.Client
// as "Service.Method".
func sdkMethods(t *testing.T) []string {
	t.Helper()
	var names []string
	ct := reflect.TypeFor[collab.Client]()
	for _, f := range reflect.VisibleFields(ct) {
		if !f.IsExported() || f.Type.Kind() != reflect.Pointer || !strings.HasSuffix(f.Type.Elem().Name(), "Service") {
			continue
		}
		for i := range f.Type.NumMethod() {
			names = append(names, f.Name+"."+f.Type.Method(i).Name)
		}
	}
	if len(names) < 100 {
		t.Fatalf("found %d SDK methods; the reflection over *collab.Client finds too few", len(names))
	}
	return names
}

// siblings are the names that reach the same endpoint as name: AllX and
// ListX, All and List, OpenX and X.
func siblings(name string) []string {
	svc, m, _ := strings.Cut(name, ".")
	out := []string{name}
	switch {
	case m == "All":
		out = append(out, svc+".List")
	case strings.HasPrefix(m, "All"):
		out = append(out, svc+".List"+m[3:], svc+"."+m[3:])
	case strings.HasPrefix(m, "Open"):
		out = append(out, svc+"."+m[4:])
	}
	return out
}

// TestEveryMethodReached holds the operations and Omitted against the SDK:
// every method is called by an operation, reached as a sibling of one, or
// omitted with a reason; and each name given exists.
func TestEveryMethodReached(t *testing.T) {
	methods := sdkMethods(t)
	reached := map[string]string{}
	for _, op := range All() {
		for _, name := range op.SDK {
			if !slices.Contains(methods, name) {
				t.Errorf("%s: SDK names %s, which *collab.Client has not", op.Name(), name)
			}
			for _, s := range siblings(name) {
				reached[s] = op.Name()
			}
		}
	}
	for name, why := range Omitted {
		if !slices.Contains(methods, name) {
			t.Errorf("Omitted names %s, which *collab.Client has not", name)
		}
		if op, ok := reached[name]; ok {
			t.Errorf("Omitted names %s, which %s calls", name, op)
		}
		if strings.TrimSpace(why) == "" {
			t.Errorf("Omitted gives no reason for %s", name)
		}
	}
	for _, m := range methods {
		if _, ok := reached[m]; !ok && Omitted[m] == "" {
			t.Errorf("%s is reached by no operation and not in Omitted", m)
		}
	}
}

// TestDefinitions checks what a front end relies on in every definition.
func TestDefinitions(t *testing.T) {
	seen := map[string]bool{}
	for _, op := range All() {
		name := op.Name()
		if seen[name] {
			t.Errorf("%s is defined twice", name)
		}
		seen[name] = true
		if op.Run == nil || op.Summary == "" || len(op.SDK) == 0 {
			t.Errorf("%s: Run, Summary and SDK are required", name)
		}
		if op.Summary != "" && (strings.HasSuffix(op.Summary, ".") || strings.ToUpper(op.Summary[:1]) != op.Summary[:1]) {
			t.Errorf("%s: summary %q: start with a capital, no final period", name, op.Summary)
		}
		if op.Writes == false && !op.Idempotent {
			t.Errorf("%s: a read is idempotent", name)
		}
		if op.Destructive && !op.Writes {
			t.Errorf("%s: destructive but does not write", name)
		}
		if op.List && op.Record == nil {
			t.Errorf("%s: a list needs a Record", name)
		}
		checkArgs(t, op)
		checkFields(t, op)
	}
}

func checkArgs(t *testing.T, op *Op) {
	t.Helper()
	names := map[string]bool{}
	positionalDone := false
	for _, a := range op.Args {
		if names[a.Name] {
			t.Errorf("%s: argument %s twice", op.Name(), a.Name)
		}
		names[a.Name] = true
		if a.Help == "" || a.Name != strings.ToLower(a.Name) || strings.Contains(a.Name, "-") {
			t.Errorf("%s: argument %q needs help and a snake_case name", op.Name(), a.Name)
		}
		if a.Positional && positionalDone {
			t.Errorf("%s: positional %s after an optional positional", op.Name(), a.Name)
		}
		if a.Positional && !a.Required {
			positionalDone = true
		}
	}
}

func checkFields(t *testing.T, op *Op) {
	t.Helper()
	if op.Record == nil {
		if len(op.Fields) > 0 {
			t.Errorf("%s: Fields without a Record", op.Name())
		}
		return
	}
	if len(op.Fields) == 0 {
		t.Errorf("%s: a Record needs Fields for a table", op.Name())
	}
	known := FieldNames(op.Record)
	for _, f := range op.Fields {
		top, _, _ := strings.Cut(f, ".")
		if !slices.Contains(known, top) {
			t.Errorf("%s: field %q is not one of %s's: %v", op.Name(), f, op.Record.Name(), known)
		}
	}
}

// TestFillSetsEveryArgument checks that the reflective option builder
// sets every field it made an argument for, of every kind.
func TestFillSetsEveryArgument(t *testing.T) {
	op := Lookup("project", "create")
	in, err := op.Input(map[string]any{"name": "web", "visibility_level": "20", "issues_enabled": "false", "path": "web-2"})
	if err != nil {
		t.Fatal(err)
	}
	opt := fill[collab.CreateProjectOptions](in)
	want := collab.CreateProjectOptions{Name: "web", Path: collab.Ptr("web-2"), IssuesEnabled: collab.Ptr(false),
		VisibilityLevel: collab.Ptr(collab.PublicVisibility)}
	if !reflect.DeepEqual(*opt, want) {
		t.Errorf("fill = %+v, want %+v", *opt, want)
	}
	if a := op.Arg("name"); a == nil || !a.Required || a.Kind != KindString {
		t.Errorf("name argument = %+v, want a required string", a)
	}
	if a := op.Arg("visibility_level"); a == nil || a.Required || a.Kind != KindInt {
		t.Errorf("visibility_level argument = %+v, want an optional integer", a)
	}
}

func TestInputErrors(t *testing.T) {
	op := Lookup("issue", "list")
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{}, "issue list needs project"},
		{map[string]any{"project": "a/b", "nope": "x"}, `issue list takes no argument "nope"`},
		{map[string]any{"project": "a/b", "state": "open"}, `state: "open" is not one of opened, closed`},
		{map[string]any{"project": ""}, "project: empty"},
		{map[string]any{"project": "a/b", "labels": 3.5}, "labels: want a list of strings"},
	} {
		_, err := op.Input(tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Input(%v) = %v, want %q", tc.values, err, tc.want)
		}
	}
	in, err := Lookup("issue", "view").Input(map[string]any{"project": "7", "issue": float64(5)})
	if err != nil || in.Project() != 7 || in.Int("issue") != 5 {
		t.Errorf("Input with JSON values = %v, %v, %v", in.Project(), in.Int("issue"), err)
	}
}

func TestOnceKey(t *testing.T) {
	op := Lookup("issue", "create")
	a, _ := op.Input(map[string]any{"project": "a/b", "title": "x"})
	b, _ := op.Input(map[string]any{"project": "a/b", "title": "x"})
	c, _ := op.Input(map[string]any{"project": "a/b", "title": "y"})
	d, _ := op.Input(map[string]any{"project": "a/b", "title": "y", OnceArg: "k1"})
	if a.Once() != b.Once() || a.Once() == c.Once() || d.Once().Key != "k1" {
		t.Errorf("Once keys: %v %v %v %v", a.Once(), b.Once(), c.Once(), d.Once())
	}
}
