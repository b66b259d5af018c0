//go:build unix

package loadbench

import "syscall"

// processCPU returns the CPU time (user and system) this process has used so far, in
// microseconds, and whether it could be read.
func processCPU() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano()/1000 + ru.Stime.Nano()/1000, true
}
