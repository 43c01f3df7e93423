package main

import (
	"context"
	"fmt"
	"io"

	"waymark/internal/buildinfo"
)

// printVersion writes the line of `waymark version` and `waymark --version`:
// module version (or main.version when set at build time), commit and Go
// version.
func printVersion(w io.Writer) {
	b := buildinfo.Read(version)
	fmt.Fprintf(w, "waymark %s (commit %s, %s)\n", b.Version, b.Commit, b.GoVersion)
}

func cmdVersion(_ context.Context, e *env, args []string) error {
	f := newFlags("version", e.stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	if len(f.Args()) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, f.Args()[0])
	}
	printVersion(e.stdout)
	return nil
}
