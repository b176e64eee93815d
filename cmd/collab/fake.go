package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/collabsvc/collab/collabtest/fakecmd"
)

// newFakeCmd is collabfake under another name: its flags are passed through
// untouched, so that scripts and their tests need one binary.
func newFakeCmd(std stdio) *cobra.Command {
	cmd := leafCmd(cmdText{
		use:   "fake [flags]",
		short: "Serve an in-memory fake of the service (the flags of collabfake; -h lists them)",
		long: "collab fake serves an in-memory fake Collaboration Service (/api/v3 and the runner\n" +
			"API /ci/api/v1) until SIGINT or SIGTERM, exactly as collabfake does, with the same\n" +
			"flags. It prints its base URL and the administrator's token. Run collab fake -h\n" +
			"for every flag. With --replay FILE it answers from a cassette written by\n" +
			"collab record instead of its model.",
	}, cobra.ArbitraryArgs, func(ctx context.Context, args []string) error {
		if code := fakecmd.Main(ctx, "collab fake", args, std.out, std.err); code != 0 {
			return exitError{code}
		}
		return nil
	})
	cmd.DisableFlagParsing = true
	return cmd
}
