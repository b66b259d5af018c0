package room_test

import "github.com/parleyhq/parley/convention"

func conventionCheck(s string) (*convention.Message, []convention.Diagnostic) {
	return convention.Check(s, convention.Options{})
}
