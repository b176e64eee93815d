package ops

import (
	"context"
	"errors"
	"iter"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/collabsvc/collab"
)

// required is a with Required set.
func required(a Arg) Arg {
	a.Required = true
	return a
}

// oneErr makes the Result of a lookup that returns a record.
func oneErr[T any](v *T, err error) (Result, error) { return One(v, nil, err) }

// unchanged makes the Result of a call the server answers 304 when it has
// nothing to change (subscribing again): then the record is cur, as it was.
// So the operation is idempotent as a script expects.
func unchanged[T any](cur *T) func(*T, *collab.Response, error) (Result, error) {
	return func(v *T, resp *collab.Response, err error) (Result, error) {
		if errors.Is(err, collab.ErrNotModified) {
			return Result{Record: cur}, nil
		}
		return One(v, resp, err)
	}
}

// orGet makes the Result of a call the server answers 304 when it has
// nothing to change (starring again): then the record is what get reads.
func orGet[T any](get func() (*T, *collab.Response, error)) func(*T, *collab.Response, error) (Result, error) {
	return func(v *T, resp *collab.Response, err error) (Result, error) {
		if errors.Is(err, collab.ErrNotModified) {
			return One(get())
		}
		return One(v, resp, err)
	}
}

// editLabels runs update when it has fields to set, then adds and removes
// the labels the add_labels and remove_labels arguments name, and returns
// the record as the last call left it (cur when there was nothing to do).
func editLabels[T any](in Input, cur *T, update func() (*T, *collab.Response, error), labels func(add bool, names []string) (*T, *collab.Response, error)) (Result, error) {
	v := cur
	var err error
	if in.hasAny("title", "description", "assignee_id", "milestone_id", "labels", "target_branch") {
		if v, _, err = update(); err != nil {
			return Result{}, err
		}
	}
	for _, add := range []bool{true, false} {
		name := "remove_labels"
		if add {
			name = "add_labels"
		}
		if names := in.Strings(name); len(names) > 0 {
			if v, _, err = labels(add, names); err != nil {
				return Result{}, err
			}
		}
	}
	return Result{Record: v}, nil
}

// hasAny reports whether any of the arguments names was given.
func (in Input) hasAny(names ...string) bool {
	for _, n := range names {
		if in.Has(n) {
			return true
		}
	}
	return false
}

// sliceSeq iterates over a list the SDK returned whole.
func sliceSeq[T any](s []*T) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		for _, v := range s {
			if !yield(v, nil) {
				return
			}
		}
	}
}

// fieldArgs are the arguments that set the fields of the SDK options T,
// one per field with a url tag, named by it: a field that is neither a
// pointer nor omitted when empty is required. help gives a field's help
// line; a field not in it is "set NAME". The fields named in skip are left
// out (an operation sets them itself).
func fieldArgs[T any](help map[string]string, skip ...string) []Arg {
	var args []Arg
	for _, f := range optionFields(reflect.TypeFor[T]()) {
		if slices.Contains(skip, f.name) {
			continue
		}
		a := Arg{Name: f.name, Kind: f.kind, Required: f.required, Help: help[f.name]}
		if a.Help == "" {
			a.Help = "set " + strings.ReplaceAll(f.name, "_", " ")
		}
		args = append(args, a)
	}
	return args
}

// fill builds the SDK options T from in: each field whose argument was
// given is set, a pointer field pointing at the value.
func fill[T any](in Input) *T {
	opt := new(T)
	v := reflect.ValueOf(opt).Elem()
	for _, f := range optionFields(v.Type()) {
		val, ok := in.values[f.name]
		if !ok {
			continue
		}
		field := v.FieldByIndex(f.index)
		target := field.Type()
		if target.Kind() == reflect.Pointer {
			p := reflect.New(target.Elem())
			p.Elem().Set(reflect.ValueOf(val).Convert(target.Elem()))
			field.Set(p)
			continue
		}
		field.Set(reflect.ValueOf(val).Convert(target))
	}
	return opt
}

// optionField is a field of SDK options.
type optionField struct {
	name     string
	index    []int
	kind     Kind
	required bool
}

// optionFields lists the url-tagged fields of t, a struct, with embedded
// structs other than the SDK's ListOptions walked into.
func optionFields(t reflect.Type) []optionField {
	var out []optionField
	for _, sf := range reflect.VisibleFields(t) {
		tag, ok := sf.Tag.Lookup("url")
		name, flags, _ := strings.Cut(tag, ",")
		if !ok || name == "-" || !sf.IsExported() {
			continue
		}
		if sf.Anonymous || inListOptions(t, sf) {
			continue
		}
		ft := sf.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		var kind Kind
		switch ft.Kind() {
		case reflect.String:
			kind = KindString
		case reflect.Int:
			kind = KindInt
		case reflect.Bool:
			kind = KindBool
		case reflect.Slice:
			kind = KindStrings
		default:
			if ft == reflect.TypeFor[time.Time]() {
				kind = KindTime
				break
			}
			continue
		}
		required := sf.Type.Kind() != reflect.Pointer && kind != KindBool && !strings.Contains(flags, "omitempty")
		out = append(out, optionField{name: name, index: sf.Index, kind: kind, required: required})
	}
	return out
}

// inListOptions reports whether sf is a page field of an embedded
// ListOptions, which the iterators set.
func inListOptions(t reflect.Type, sf reflect.StructField) bool {
	for i := 1; i < len(sf.Index); i++ {
		if t.FieldByIndex(sf.Index[:i]).Type == reflect.TypeFor[collab.ListOptions]() {
			return true
		}
	}
	return false
}

// enum sets the Enum of the argument name in args.
func enum(args []Arg, name string, values ...string) []Arg {
	for i := range args {
		if args[i].Name == name {
			args[i].Enum = values
		}
	}
	return args
}

// positional is a with Positional set.
func positional(a Arg) Arg {
	a.Positional = true
	return a
}

// onIssue makes a Run of run, which gets the issue the "issue" argument
// names.
func onIssue(run func(ctx context.Context, c *collab.Client, in Input, is *collab.Issue) (Result, error)) func(context.Context, *collab.Client, Input) (Result, error) {
	return func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
		is, err := in.Issue(ctx, c)
		if err != nil {
			return Result{}, err
		}
		return run(ctx, c, in, is)
	}
}

// onMergeRequest makes a Run of run, which gets the merge request the
// "merge_request" argument names.
func onMergeRequest(run func(ctx context.Context, c *collab.Client, in Input, mr *collab.MergeRequest) (Result, error)) func(context.Context, *collab.Client, Input) (Result, error) {
	return func(ctx context.Context, c *collab.Client, in Input) (Result, error) {
		mr, err := in.MergeRequest(ctx, c)
		if err != nil {
			return Result{}, err
		}
		return run(ctx, c, in, mr)
	}
}
