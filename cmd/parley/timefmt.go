package main

import "github.com/parleyhq/parley/internal/textline"

// timeFormat is how the CLI prints a time: ISO basic UTC to the second, as history writes
// message times and the web UI shows them (20261201T165703Z). Format a time.Time with
// t.UTC().Format(timeFormat).
const timeFormat = textline.TimeFormat
