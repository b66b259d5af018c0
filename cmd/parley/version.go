package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3"; otherwise it comes
// from the module's build information.
var version = ""

func parleyVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "v0.1.0-dev"
}

func runVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "version", "Print parley's version and the Go version it was built with.", "  parley version")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "parley %s (%s %s/%s)\n", parleyVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
