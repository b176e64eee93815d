package mcptools

import "fmt"

// ArgError is a bad argument of a tool call: the answer names it.
type ArgError struct {
	Arg    string
	Reason string
}

func (e *ArgError) Error() string { return fmt.Sprintf("argument %q: %s", e.Arg, e.Reason) }

func argError(arg, reason string) error { return &ArgError{Arg: arg, Reason: reason} }
