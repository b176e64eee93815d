// Command collab is the Collaboration Service API from the shell, for CI
// jobs, cron jobs and one-off migrations:
//
//	collab api [METHOD] PATH      call any endpoint; --paginate makes one JSON array of every page
//	collab hook listen            receive webhooks and print each as one JSON line
//	collab hook replay            send recorded webhook lines again
//	collab queue stats|dead|…     inspect a webhook queue, requeue or delete its dead letters
//	collab fake                   serve an in-memory fake of the service
//	collab version                print the module and Go versions
//	collab completion SHELL       print a completion script for bash, zsh, fish or powershell
//
// It reads the server from COLLAB_URL (or --url) and the token from
// COLLAB_TOKEN (or --token-file); COLLAB_TOKEN_KIND=oauth sends it as an OAuth
// bearer token instead of a private token. A token is never taken as a flag
// value, where it would show in the process list and in shell history.
//
// Exit status: 0 on success, 1 when the server answers an error or a request
// fails, 2 on a usage error.
//
// Install it with
//
//	go install github.com/collabsvc/collab/cmd/collab@latest
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	os.Exit(code)
}

// stdio is where a command reads and writes; tests replace it.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// usageError marks a mistake on the command line, which exits 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// exitError carries a status other than 1 chosen by a subcommand that has
// already reported its failure (collab fake).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// run executes the command line args and returns the exit status.
func run(ctx context.Context, args []string, std stdio) int {
	root := newRootCmd(std)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(std.err, "collab: %v\nRun 'collab help' for usage.\n", err)
		return exitUsage
	default:
		fmt.Fprintf(std.err, "collab: %v\n", err)
		return exitFail
	}
}

// newRootCmd builds the command tree.
func newRootCmd(std stdio) *cobra.Command {
	root := &cobra.Command{
		Use:   "collab",
		Short: "The Collaboration Service API from the shell",
		Long: "collab calls the Collaboration Service API for scripts: any endpoint with pagination that\n" +
			"makes one JSON document, webhooks as JSON lines, and a fake server for tests.\n\n" +
			"Configuration: COLLAB_URL (or --url), COLLAB_TOKEN (or --token-file), and\n" +
			"COLLAB_TOKEN_KIND=private|oauth (default private).",
		SilenceErrors: true,
		SilenceUsage:  true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetIn(std.in)
	root.SetOut(std.out)
	root.SetErr(std.err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	var cfg config
	cfg.bind(root)
	root.AddCommand(
		newAPICmd(&cfg, std),
		newFakeCmd(std),
		newHookCmd(std),
		newQueueCmd(std),
		newVersionCmd(std),
	)
	return root
}

// rangeArgs is cobra.RangeArgs reporting a usage error.
func rangeArgs(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.RangeArgs(lo, hi)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}
