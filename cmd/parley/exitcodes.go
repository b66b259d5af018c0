package main

import "github.com/parleyhq/parley"

// exitCodeOf is the CLI's one table from the server's error codes to exit statuses. A code
// not in it exits 1, like any failure; a usage mistake exits 2. A full disk on the server is
// a temporary failure that the same command, unchanged, can retry later: 75 (EX_TEMPFAIL in
// sysexits.h), so a script can tell it from a refusal of what it sent.
var exitCodeOf = map[string]int{
	parley.ESTORAGEFULL: 75,
}

// apiExitCode is the exit status for a server error with the given code.
func apiExitCode(code string) int {
	if c, ok := exitCodeOf[code]; ok {
		return c
	}
	return 1
}
