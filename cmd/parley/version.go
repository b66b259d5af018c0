package main

import (
	"context"
	"fmt"
	"runtime"

	"github.com/parleyhq/parley/internal/version"
)

// parleyVersion is parley's one version string (internal/version: a release sets it with
// -ldflags "-X github.com/parleyhq/parley/internal/version.version=v1.2.3").
func parleyVersion() string { return version.String() }

func runVersion(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "version", "Print parley's version and the Go version it was built with.", "  parley version")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "parley %s (%s %s/%s)\n", parleyVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
