//go:build unix

package sqlite

import "syscall"

// freeBytes is the space the file system holding dir has free for an unprivileged writer.
func freeBytes(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}
