package main

import (
	"github.com/spf13/cobra"

	"github.com/collabsvc/collab/internal/fakecmd"
)

// newFakeCmd is collabfake under another name: its flags are passed through
// untouched, so that scripts and their tests need one binary.
func newFakeCmd(std stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "fake [flags]",
		Short: "Serve an in-memory fake of the service (the flags of collabfake; -h lists them)",
		Long: "collab fake serves an in-memory fake Collaboration Service (/api/v3 and the runner\n" +
			"API /ci/api/v1) until SIGINT or SIGTERM, exactly as collabfake does, with the same\n" +
			"flags. It prints its base URL and the administrator's token. Run collab fake -h\n" +
			"for every flag.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			// The context carries the signal handler main installed first.
			if code := fakecmd.Main(cmd.Context(), "collab fake", args, std.out, std.err); code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
}
