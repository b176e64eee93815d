package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/collabsvc/collab"
)

// Kind is the type of an argument's value.
type Kind string

// The kinds of argument. Input converts every value to the Go type named.
const (
	KindString  Kind = "string"  // string
	KindInt     Kind = "integer" // int
	KindBool    Kind = "boolean" // bool
	KindStrings Kind = "strings" // []string; a front end may split commas
	KindTime    Kind = "time"    // time.Time, given in RFC 3339
	// KindProject is a project: its path ("group/project") or its id, a
	// string in either case; Input.Project gives what the SDK takes.
	KindProject Kind = "project"
	// KindGroup is a group: its path or its id (string).
	KindGroup Kind = "group"
	// KindIssue is an issue's number in its project, the #iid people see
	// (int); Input.Issue finds the issue.
	KindIssue Kind = "issue"
	// KindMergeRequest is a merge request's number in its project, the
	// !iid people see (int); Input.MergeRequest finds it.
	KindMergeRequest Kind = "merge_request"
)

// JSONType is the JSON Schema type of the kind's values: "string",
// "integer", "boolean" or "array" (of strings).
func (k Kind) JSONType() string {
	switch k {
	case KindInt, KindIssue, KindMergeRequest:
		return "integer"
	case KindBool:
		return "boolean"
	case KindStrings:
		return "array"
	}
	return "string"
}

// Completion names what a front end can offer for an argument's value from
// the server: project paths, issue numbers, labels, branches.
type Completion string

// The completions. A Kind implies its own (KindProject completes projects);
// Arg.Complete names one for a string argument.
const (
	CompleteNone         Completion = ""
	CompleteProject      Completion = "project"
	CompleteIssue        Completion = "issue"
	CompleteMergeRequest Completion = "merge_request"
	CompleteLabel        Completion = "label"
	CompleteBranch       Completion = "branch"
)

// Arg is one argument of an operation.
type Arg struct {
	// Name is the argument's name in snake_case ("assignee_id"); a
	// command-line flag spells it in kebab-case ("--assignee-id").
	Name string
	Kind Kind
	// Help is one line, lower case, without a final period. A word in
	// backquotes names the value in a usage line ("the issue's `TITLE`").
	Help string
	// Required says that the operation cannot run without it.
	Required bool
	// Positional says that a command line gives it as an argument rather
	// than a flag, in the order of Op.Args.
	Positional bool
	// Enum is the closed set of values it takes, when there is one.
	Enum []string
	// Complete names what the server can offer as its value; see
	// Arg.Completion for the one a front end should use.
	Complete Completion
}

// Completion is what the server can offer as the argument's value: Complete
// when set, else what its Kind implies.
func (a *Arg) Completion() Completion {
	switch {
	case a.Complete != CompleteNone:
		return a.Complete
	case a.Kind == KindProject:
		return CompleteProject
	case a.Kind == KindIssue:
		return CompleteIssue
	case a.Kind == KindMergeRequest:
		return CompleteMergeRequest
	}
	return CompleteNone
}

// ProjectArg is the project argument most operations take first. A command
// line fills it from -R or the current directory's git remote.
var ProjectArg = Arg{Name: "project", Kind: KindProject, Required: true,
	Help: "the project, as `GROUP/PROJECT` or its id"}

// Input holds an operation's argument values, each converted to its Kind's
// Go type. The zero Input has no values.
type Input struct {
	op     *Op
	values map[string]any
	iter   []collab.IterOption
}

// InputError is an Input that an operation cannot run with: a missing or
// unknown argument, a value of the wrong kind, or arguments that exclude
// each other. A front end reports it as a usage error.
type InputError struct{ msg string }

func (e *InputError) Error() string { return e.msg }

// inputErrorf makes an *InputError.
func inputErrorf(format string, a ...any) error { return &InputError{fmt.Sprintf(format, a...)} }

// Input converts values (by argument name) to an Input: a value may be a
// string, as a command line gives it, or what encoding/json decodes (a
// float64 or json.Number for a number, []any for a list). It reports an
// unknown name, a value of the wrong kind, one outside Enum and a missing
// required argument, each naming the argument.
func (o *Op) Input(values map[string]any) (Input, error) {
	in := Input{op: o, values: make(map[string]any, len(values))}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		a := o.Arg(name)
		if a == nil {
			return Input{}, inputErrorf("%s takes no argument %q", o.Name(), name)
		}
		v, err := a.convert(values[name])
		if err != nil {
			return Input{}, inputErrorf("%s: %v", name, err)
		}
		in.values[name] = v
	}
	for _, a := range o.Args {
		if _, ok := in.values[a.Name]; a.Required && !ok {
			return Input{}, inputErrorf("%s needs %s", o.Name(), a.Name)
		}
	}
	return in, nil
}

// WithIter returns in with options for the SDK iterators a list's Run
// builds (collab.Prefetch).
func (in Input) WithIter(opts ...collab.IterOption) Input {
	in.iter = opts
	return in
}

// IterOptions are the options given with WithIter.
func (in Input) IterOptions() []collab.IterOption { return in.iter }

// convert turns v into the Go type of a's kind.
func (a *Arg) convert(v any) (any, error) {
	var out any
	var err error
	switch a.Kind {
	case KindInt, KindIssue, KindMergeRequest:
		out, err = toInt(v)
	case KindBool:
		out, err = toBool(v)
	case KindStrings:
		out, err = toStrings(v)
	case KindTime:
		var s string
		if s, err = toString(v); err == nil {
			out, err = time.Parse(time.RFC3339, s)
		}
	default:
		var s string
		s, err = toString(v)
		if err == nil && (a.Kind == KindProject || a.Kind == KindGroup) && s == "" {
			err = fmt.Errorf("empty")
		}
		out = s
	}
	if err != nil {
		return nil, err
	}
	values, isList := out.([]string)
	if !isList {
		s, _ := out.(string)
		values = []string{s}
	}
	for _, s := range values {
		if len(a.Enum) > 0 && !slices.Contains(a.Enum, s) {
			return nil, fmt.Errorf("%q is not one of %s", s, strings.Join(a.Enum, ", "))
		}
	}
	return out, nil
}

func toString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case int:
		return strconv.Itoa(v), nil
	}
	return "", fmt.Errorf("want a string, not %T", v)
}

func toInt(v any) (int, error) {
	switch v := v.(type) {
	case int:
		return v, nil
	case float64:
		if v == float64(int(v)) {
			return int(v), nil
		}
	case json.Number:
		return strconv.Atoi(v.String())
	case string:
		n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(v, "#"), "!"))
		if err != nil {
			return 0, fmt.Errorf("want a whole number, not %q", v)
		}
		return n, nil
	}
	return 0, fmt.Errorf("want a whole number, not %v", v)
}

func toBool(v any) (bool, error) {
	switch v := v.(type) {
	case bool:
		return v, nil
	case string:
		return strconv.ParseBool(v)
	}
	return false, fmt.Errorf("want true or false, not %v", v)
}

func toStrings(v any) ([]string, error) {
	switch v := v.(type) {
	case []string:
		return v, nil
	case string:
		return []string{v}, nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			s, err := toString(e)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a list of strings, not %T", v)
}

// Has reports whether the argument name was given.
func (in Input) Has(name string) bool {
	_, ok := in.values[name]
	return ok
}

// String is the value of a string argument, "" when not given.
func (in Input) String(name string) string { s, _ := in.values[name].(string); return s }

// Int is the value of an integer argument, 0 when not given.
func (in Input) Int(name string) int { n, _ := in.values[name].(int); return n }

// Bool is the value of a boolean argument, false when not given.
func (in Input) Bool(name string) bool { b, _ := in.values[name].(bool); return b }

// Strings is the value of a list argument, nil when not given.
func (in Input) Strings(name string) []string { s, _ := in.values[name].([]string); return s }

// Time is the value of a time argument, the zero time when not given.
func (in Input) Time(name string) time.Time { t, _ := in.values[name].(time.Time); return t }

// Ptr is the value of an argument as a pointer to T, nil when not given:
// an optional field of the SDK's options. T is the argument's Go type or a
// type defined on it (collab.IssueState for a string).
func Ptr[T any](in Input, name string) *T {
	v, ok := in.values[name]
	if !ok {
		return nil
	}
	out := reflectConvert[T](v)
	return &out
}

// Project is the "project" argument as the SDK takes it: an int for an id,
// else the path.
func (in Input) Project() any { return idOrPath(in.String("project")) }

// Group is the "group" argument as the SDK takes it.
func (in Input) Group() any { return idOrPath(in.String("group")) }

func idOrPath(s string) any {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	return s
}

// Issue finds the issue whose number (iid) the "issue" argument gives.
func (in Input) Issue(ctx context.Context, c *collab.Client) (*collab.Issue, error) {
	is, _, err := c.Issues.GetByIID(ctx, in.Project(), in.Int("issue"))
	return is, err
}

// MergeRequest finds the merge request whose number (iid) the
// "merge_request" argument gives.
func (in Input) MergeRequest(ctx context.Context, c *collab.Client) (*collab.MergeRequest, error) {
	mr, _, err := c.MergeRequests.GetByIID(ctx, in.Project(), in.Int("merge_request"))
	return mr, err
}

// Once is the collab.Once of an Op with Once: the "idempotency_key"
// argument, or a key derived from the operation's name and its other
// arguments, so that the same command run again finds what it made.
func (in Input) Once() collab.Once {
	if k := in.String(OnceArg); k != "" {
		return collab.Once{Key: k}
	}
	h := sha256.New()
	h.Write([]byte(in.op.ID()))
	for _, name := range slices.Sorted(maps.Keys(in.values)) {
		fmt.Fprintf(h, "\x00%s=%v", name, in.values[name])
	}
	return collab.Once{Key: "collab-cli " + hex.EncodeToString(h.Sum(nil))}
}

// reflectConvert converts v to T, a type with the same underlying type. A
// mismatch is a mistake in a definition, which the package's tests catch.
func reflectConvert[T any](v any) T {
	return reflect.ValueOf(v).Convert(reflect.TypeFor[T]()).Interface().(T)
}
