package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version overrides the module version from the build information, for a
// release build: go build -ldflags "-X github.com/sessionpipe/sessionpipe/internal/app.version=v1.2.0".
var version string

// VersionLine describes the running binary for `COMMAND version`: the module
// version, the commit it was built from (with "+dirty" for uncommitted
// changes) and that commit's date, and the Go version, as the build
// recorded them (debug.ReadBuildInfo). `go run` and `go build` in a
// checkout record the commit; `go install …@version` records the version.
func VersionLine(command string) string {
	v, commit, date, dirty := version, "", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				date = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", command, v)
	var details []string
	if commit != "" {
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if dirty {
			commit += "+dirty"
		}
		details = append(details, "commit "+commit)
	}
	if date != "" {
		details = append(details, "committed "+date)
	}
	details = append(details, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
	fmt.Fprintf(&b, " (%s)", strings.Join(details, ", "))
	return b.String()
}

// IsVersionArg reports whether arg asks a command for its version.
func IsVersionArg(arg string) bool {
	return arg == "version" || arg == "-version" || arg == "--version"
}
