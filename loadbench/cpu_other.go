//go:build !unix

package loadbench

// processCPU is not measured on this system.
func processCPU() (int64, bool) { return 0, false }
