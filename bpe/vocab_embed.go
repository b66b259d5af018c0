//go:build !parley_novocab

package bpe

import _ "embed"

//go:embed data/o200k_base.bin
var o200kData string

//go:embed data/cl100k_base.bin
var cl100kData string

//go:embed data/o200k_base.tab
var o200kTab string

//go:embed data/cl100k_base.tab
var cl100kTab string

//go:embed data/o200k_base.tri
var o200kTri string

//go:embed data/cl100k_base.tri
var cl100kTri string

//go:embed data/o200k_base.unit
var o200kUnits string

//go:embed data/cl100k_base.unit
var cl100kUnits string
