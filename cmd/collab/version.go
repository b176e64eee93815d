package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/collabsvc/collab"
)

func newVersionCmd(std stdio) *cobra.Command {
	return leafCmd(cmdText{use: "version", short: "Print the module version and the Go version it was built with"},
		rangeArgs(0, 0), func(context.Context, []string) error {
			_, err := fmt.Fprintf(std.out, "collab %s\n%s\n", moduleVersion(), runtime.Version())
			return err
		})
}

// moduleVersion is the version go install recorded, such as v1.4.0, or the
// SDK's own version with "-devel" for a build from a source tree.
func moduleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return collab.Version + "-devel"
}
