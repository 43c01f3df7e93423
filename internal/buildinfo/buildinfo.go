// Package buildinfo says which build of Waymark is running: its module
// version, the commit it was built from and the Go version, read from the
// binary itself. `waymark version`, GET /healthz, the waymark_build_info
// metric and the traces' service.version all report this one answer.
package buildinfo

import (
	"cmp"
	"runtime"
	"runtime/debug"
)

// Info describes a build.
type Info struct {
	Version   string // module version, or the one set at build time; "dev" when neither is known
	Commit    string // VCS revision, "+dirty" when built from a modified tree; "unknown" without VCS information
	GoVersion string // runtime.Version()
}

// Read returns the running binary's build information. override is the
// version set at build time (-ldflags "-X main.version=…"): when it is
// neither "" nor "dev" it wins over the module version.
func Read(override string) Info {
	i := Info{Version: override, Commit: "unknown", GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		i.Version = cmp.Or(i.Version, "dev")
		return i
	}
	if (i.Version == "" || i.Version == "dev") && bi.Main.Version != "" {
		i.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				i.Commit += "+dirty"
			}
		}
	}
	i.Version = cmp.Or(i.Version, "dev")
	return i
}
