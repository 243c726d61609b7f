package flower

import "runtime/debug"

// Module is flower's module path.
const Module = "github.com/flower-run/flower"

// Version is the version of flower built into this program: the module
// version ("(devel)" for a build of a checkout) with the VCS revision when
// the build recorded one; in a program that embeds flower, the version of
// the flower module it requires. "unknown" without build information.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if info.Main.Path != Module {
		for _, d := range info.Deps {
			if d.Path == Module {
				return d.Version
			}
		}
		return "unknown"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}
