//go:build !unix

package sqlite

// freeBytes does not know the free space here, so the WAL is not warmed.
func freeBytes(string) (uint64, bool) { return 0, false }
