package main

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// buildInfo describes the binary: module version (or main.version when set
// at build time), commit and Go version.
func buildInfo() (mod, commit, goVersion string) {
	mod, commit, goVersion = version, "unknown", runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		if version == "dev" && bi.Main.Version != "" {
			mod = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					commit += "+dirty"
				}
			}
		}
	}
	return cmp.Or(mod, "dev"), commit, goVersion
}

func cmdVersion(_ context.Context, e *env, args []string) error {
	fs := newFlags("version", e.stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	mod, commit, gov := buildInfo()
	fmt.Fprintf(e.stdout, "waymark %s (commit %s, %s)\n", mod, commit, gov)
	return nil
}
