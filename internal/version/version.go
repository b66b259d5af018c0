// Package version holds parley's one version string: `parley version` prints it, the MCP
// server and the stdio bridge report it as their implementation version, and the HTTP
// client and the bridge send it in their User-Agent.
//
// A release sets it when building:
//
//	go build -ldflags "-X github.com/parleyhq/parley/internal/version.version=v1.2.3" ./cmd/parley
//
// Without that, a binary installed with `go install …@v1.2.3` reports the module version
// from its build information, and a build from a checkout reports v0.1.0-dev.
package version

import "runtime/debug"

// version is the release version, set with -ldflags -X (see the package comment).
var version = ""

// dev is what a build from a checkout reports.
const dev = "v0.1.0-dev"

// String returns parley's version, e.g. v1.2.3 or v0.1.0-dev.
func String() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return dev
}
