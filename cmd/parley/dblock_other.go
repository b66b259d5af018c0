//go:build !unix

package main

import "os"

// tryLock is a no-op where flock does not exist: the second-server check is unix-only.
func tryLock(*os.File) (bool, error) { return false, nil }
