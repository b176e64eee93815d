// Command collab is the Collaboration Service from the shell, for scripts,
// CI jobs and people:
//
//	collab issue|mr|build|label|milestone|project|group|member|branch|hook|emoji|note|settings|user VERB
//	                              typed commands: collab issue list, collab mr merge 12, collab build trace 7 --follow
//	collab auth login|status|logout  store a token per server, check it, forget it
//	collab api [METHOD] PATH      call any endpoint; --paginate makes one JSON array of every page
//	collab hook listen            receive webhooks and print each as one JSON line
//	collab hook replay            send recorded webhook lines again
//	collab queue stats|dead|…     inspect a webhook queue, requeue or delete its dead letters
//	collab fake                   serve an in-memory fake of the service (or replay a cassette)
//	collab record                 record a session with a server into a cassette
//	collab conform FILE           send a cassette's requests again and report where the answers differ
//	collab version                print the module and Go versions
//	collab completion SHELL       print a completion script for bash, zsh, fish or powershell
//
// It reads the server from COLLAB_URL (or --url, or the one server signed in
// with collab auth login) and the token from COLLAB_TOKEN (or --token-file,
// or the hosts file collab auth login writes); COLLAB_TOKEN_KIND=oauth sends
// it as an OAuth bearer token instead of a private token. A token is never
// taken as a flag value, where it would show in the process list and in
// shell history. The project of a typed command is -R GROUP/PROJECT, else
// COLLAB_REPO, else the git remote of the current directory on the server.
//
// Every command that prints records prints a table on a terminal and
// tab-separated values off one, and takes --json [fields], --jq and
// --template; lists take --limit and --paginate.
//
// Exit status (collab help exit-codes): 0 on success, an empty list
// included; 1 when the server answers an error or a request fails; 2 on a
// usage error; 4 when not signed in or not allowed; 8 when still pending
// (build view --exit-status).
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
	"strings"
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
	root := buildRootCmd(std, len(args) > 0 && strings.HasPrefix(args[0], cobra.ShellCompRequestCmd))
	root.SetArgs(joinJSONFields(root, args))
	err := root.ExecuteContext(ctx)
	code := exitStatus(err)
	var ee exitError
	switch {
	case err == nil, errors.As(err, &ee):
	case code == exitUsage:
		fmt.Fprintf(std.err, "collab: %v (collab help shows the usage)\n", err)
	default:
		msg := strings.TrimPrefix(err.Error(), "collab: ")
		if h := hint(err); h != "" {
			msg += " (" + h + ")"
		}
		fmt.Fprintf(std.err, "collab: %s\n", msg)
	}
	return code
}

// newRootCmd builds the command tree, without the completion of flag
// values.
func newRootCmd(std stdio) *cobra.Command { return buildRootCmd(std, false) }

// buildRootCmd builds the command tree; completing registers the
// completion of flag values, which only a completion request needs (cobra
// keeps what is registered for good, so a tree built in a test or a
// benchmark would never be freed).
func buildRootCmd(std stdio, completing bool) *cobra.Command {
	var cfg config
	hook := newHookCmd(std)
	root := groupCmd(cmdText{
		use:   "collab",
		short: "The Collaboration Service API from the shell",
		long: "collab works with a Collaboration Service from scripts and the shell: typed commands\n" +
			"(collab issue list, collab mr merge 12), any endpoint (collab api), webhooks as JSON lines,\n" +
			"and a fake server for tests.\n\n" +
			"Configuration: COLLAB_URL (or --url), COLLAB_TOKEN (or --token-file, or collab auth login),\n" +
			"COLLAB_TOKEN_KIND=private|oauth (default private), and COLLAB_REPO or -R for the project\n" +
			"(default: the git remote of the current directory). Exit statuses: collab help exit-codes.",
	},
		newAPICmd(&cfg, std),
		newAuthCmd(&cfg, std),
		newMCPCmd(&cfg, std),
		hook,
		newFakeCmd(std),
		newRecordCmd(std),
		newConformCmd(&cfg, std),
		newQueueCmd(std),
		newVersionCmd(std),
	)
	root.AddCommand(typedCmds(&cfg, std, map[string]*cobra.Command{"hook": hook}, completing)...)
	root.AddCommand(&cobra.Command{Use: "exit-codes", Short: "What each exit status means", Long: exitCodesHelp})
	root.SilenceErrors = true
	root.SilenceUsage = true
	root.Args = func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("unknown command %q", args[0])
		}
		return nil
	}
	root.SetIn(std.in)
	root.SetOut(std.out)
	root.SetErr(std.err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	cfg.bind(root)
	return root
}

// cmdText is what a command's help says: its usage line, its summary, its
// description and its examples.
type cmdText struct {
	use, short, long, example string
}

// command is a command that shows text, checks its arguments with args and
// then calls runE.
func (text cmdText) command(args cobra.PositionalArgs, runE func(*cobra.Command, []string) error) *cobra.Command {
	return &cobra.Command{Use: text.use, Short: text.short, Long: text.long, Example: text.example, Args: args, RunE: runE}
}

// leafCmd is a command that checks its arguments with args, then runs run
// with the command's context (it carries main's signal handler) and the
// arguments.
func leafCmd(text cmdText, args cobra.PositionalArgs, run func(ctx context.Context, args []string) error) *cobra.Command {
	return text.command(args, func(cmd *cobra.Command, args []string) error { return run(cmd.Context(), args) })
}

// groupCmd is a command that holds subs: run alone, it prints its help.
func groupCmd(text cmdText, subs ...*cobra.Command) *cobra.Command {
	cmd := text.command(rangeArgs(0, 0), func(cmd *cobra.Command, _ []string) error { return cmd.Help() })
	cmd.AddCommand(subs...)
	return cmd
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

// readTokenFile reads a token or a secret from file, named by flag in its
// errors. An empty file is a usage error: the caller meant to send a token,
// and an empty one would check, or send, nothing.
func readTokenFile(flag, file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", usagef("%s: %v", flag, err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", usagef("%s: %s is empty", flag, file)
	}
	return token, nil
}
