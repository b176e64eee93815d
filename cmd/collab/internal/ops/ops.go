// Package ops is the one definition of every operation the collab command
// offers: list issues, merge a merge request, read a build's trace. Each *Op
// says what the operation is called (a noun and a verb), which arguments it
// takes and of what kind, whether it writes, whether repeating it is safe,
// whether it destroys something, which SDK methods it calls and which
// record it returns. The typed commands ("collab issue list") and the MCP
// tools ("collab mcp") are both derived from these definitions, so neither
// describes an operation a second time.
//
// # Using an operation
//
// Find it with Lookup or walk All; build its Input from named values (a
// flag's text, or a decoded JSON object) with Op.Input, which converts each
// value to its Kind and checks what is required; then call Op.Run with a
// client. A front end decides how to show the Result: Record for one record,
// Items for a list (stop pulling when you have enough; no later page is
// fetched), Write for text such as a build's trace.
//
// Deriving a schema: each Arg's Kind has a JSON type (Kind.JSONType) and a
// closed set of values in Enum; Op.Record is the Go type of the record (its
// JSON names are its fields' json tags, see FieldNames; a record encodes
// itself with MarshalJSON), an array of it when Op.List is set; Op.Fields
// are the record's fields worth showing in a table or a trimmed answer,
// first the ones that identify it. Writes, Idempotent and Destructive are
// the hints a tool carries; an Op with Once takes OnceArg, the idempotency
// key. An *InputError from Input or Run is the caller's mistake (a usage
// error, an invalid parameter); SecretFields are the fields to redact
// before a record is shown.
//
// # Adding an operation
//
// Add an *Op to the slice of its noun (issue.go holds issueOps), or start a
// new file and list its slice in groups below. Give it:
//   - Noun and Verb, lower case; several words in a verb are joined by "-".
//   - Summary: one line, starting with a verb, no final period.
//   - Args: the project first (ProjectArg), then positional arguments in
//     order, then the rest. A Kind of KindIssue or KindMergeRequest takes
//     the number people see (the iid); Run finds the record with Input.Issue
//     or Input.MergeRequest.
//   - Writes, Idempotent and Destructive, honestly: a read is idempotent; a
//     create is not (unless Once is set, see below); closing, setting a field
//     and deleting are idempotent; a delete, an erase or an overwrite that
//     cannot be undone is destructive.
//   - SDK: every method of *collab.Client's services that Run calls, as
//     "Service.Method" ("Issues.Update"). A test holds the union of these,
//     and the Omitted list, against every method of the SDK.
//   - Record: RecordOf[T]() of what Run returns, and List when it returns
//     many; Fields: the JSON names of the columns a table shows.
//   - Once, for a create that goes through an SDK CreateOnce helper: an
//     optional "idempotency_key" argument is added, and Input.Once gives the
//     collab.Once to pass.
//   - Run: a few lines that build the SDK options from the Input and return
//     One(...), Many(...), Done(...) or a Result with Write.
//
// Then add a script test for its command in cmd/collab/testdata/script.
package ops

import (
	"cmp"
	"context"
	"io"
	"iter"
	"reflect"
	"slices"
	"strings"

	"github.com/collabsvc/collab"
)

// Op is one operation.
type Op struct {
	// Noun and Verb name it: "issue" "list". The command is "collab issue
	// list"; ID is "issue_list".
	Noun, Verb string
	// Summary is one line, starting with a verb ("List a project's issues").
	Summary string
	// Help says more, when more helps; it may be empty.
	Help string
	// Args are the operation's arguments, positional ones in order.
	Args []Arg

	// Writes says that it changes state on the server.
	Writes bool
	// Idempotent says that running it again with the same Input leaves
	// the server as one run did. Every read is.
	Idempotent bool
	// Destructive says that it deletes or overwrites what cannot be got
	// back (a delete, an erase).
	Destructive bool
	// Once says that it creates through an SDK CreateOnce helper: it takes
	// an "idempotency_key" argument, and a repeat with the same key returns
	// what the first run made instead of making another.
	Once bool
	// LocalFiles says that it reads or writes a file on this machine named
	// by an argument (an upload).
	LocalFiles bool
	// Binary says that Result.Write writes bytes that are not text (an
	// archive).
	Binary bool

	// SDK names the methods of *collab.Client's services that Run calls,
	// as "Service.Method".
	SDK []string
	// Record is the type of the record Run returns (a struct type, not a
	// pointer), or nil when it returns text (Result.Write) or nothing.
	Record reflect.Type
	// List says that Run returns many records (Result.Items).
	List bool
	// Fields are the JSON names of the record's fields a table shows, the
	// identifying ones first; a name with dots reaches into an object
	// ("author.username").
	Fields []string
	// Status says that the record has a state that may still change (a
	// build): Result.Pending and Result.Failed are set, and the command
	// takes --exit-status.
	Status bool

	// Run performs the operation.
	Run func(ctx context.Context, c *collab.Client, in Input) (Result, error)
}

// Name is the operation's name as a command says it: "issue list".
func (o *Op) Name() string { return o.Noun + " " + o.Verb }

// ID is the operation's name as one identifier: "issue_list".
func (o *Op) ID() string { return o.Noun + "_" + strings.ReplaceAll(o.Verb, "-", "_") }

// Arg returns the argument called name, or nil.
func (o *Op) Arg(name string) *Arg {
	for i := range o.Args {
		if o.Args[i].Name == name {
			return &o.Args[i]
		}
	}
	return nil
}

// Result is what an operation returns: one of Record, Items or Write, or
// none of them for an operation that returns nothing (a delete).
type Result struct {
	// Record is one record: a pointer to a value of Op.Record.
	Record any
	// Items yields the records of a list in order, each a pointer to a
	// value of Op.Record, and an error last if one happens. Pages are
	// fetched as the loop asks for more.
	Items iter.Seq2[any, error]
	// Write writes text: a trace, a diff, an artifacts archive.
	Write func(w io.Writer) error
	// Pending says, for an Op with Status, that the record's state may
	// still change (a build that is pending or running).
	Pending bool
	// Failed says, for an Op with Status, that the record ended badly (a
	// build that failed or was canceled).
	Failed bool
}

// One makes the Result of an SDK call that returns a record.
func One[T any](v *T, _ *collab.Response, err error) (Result, error) {
	if err != nil {
		return Result{}, err
	}
	return Result{Record: v}, nil
}

// Many makes the Result of an SDK iterator.
func Many[T any](seq iter.Seq2[*T, error]) (Result, error) {
	return Result{Items: func(yield func(any, error) bool) {
		for v, err := range seq {
			if !yield(v, err) {
				return
			}
		}
	}}, nil
}

// Done makes the Result of an SDK call that returns no record.
func Done(_ *collab.Response, err error) (Result, error) { return Result{}, err }

// RecordOf is the record type T, for Op.Record.
func RecordOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// groups are the operations, one slice per noun.
var groups = [][]*Op{
	issueOps, mrOps, buildOps, labelOps, milestoneOps, projectOps, groupOps,
	memberOps, branchOps, hookOps, emojiOps, noteOps, settingsOps, userOps,
}

var all = func() []*Op {
	var ops []*Op
	for _, g := range groups {
		for _, op := range g {
			if op.Once {
				op.Args = append(op.Args, Arg{Name: OnceArg, Kind: KindString,
					Help: "create at most once per `KEY`: a repeat with the same key returns what the first run made (default: derived from the other arguments)"})
			}
			ops = append(ops, op)
		}
	}
	slices.SortStableFunc(ops, func(a, b *Op) int { return cmp.Compare(a.Noun, b.Noun) })
	return ops
}()

// OnceArg is the name of the argument an Op with Once adds.
const OnceArg = "idempotency_key"

// All returns every operation, sorted by noun and, within a noun, in the
// order of its definition. The slice is shared: do not change it.
func All() []*Op { return all }

// Lookup returns the operation noun verb, or nil.
func Lookup(noun, verb string) *Op {
	for _, op := range all {
		if op.Noun == noun && op.Verb == verb {
			return op
		}
	}
	return nil
}

// Nouns returns the nouns of All in order, each once.
func Nouns() []string {
	var nouns []string
	for _, op := range all {
		if len(nouns) == 0 || nouns[len(nouns)-1] != op.Noun {
			nouns = append(nouns, op.Noun)
		}
	}
	return nouns
}
