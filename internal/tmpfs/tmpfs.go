// Package tmpfs mounts a small tmpfs for a test that needs a real disk that fills.
package tmpfs

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Mount mounts a tmpfs of size (as mount's size= takes it: "2m") in tb's temporary directory
// and returns its path, or skips tb where it cannot (not root, no mount). The unmount is
// registered now, so it runs after every cleanup registered later, such as a server's stop.
func Mount(tb testing.TB, size string) string {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("a real full disk needs a tmpfs mount, which needs root")
	}
	mnt := filepath.Join(tb.TempDir(), "disk")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		tb.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		tb.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	tb.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			tb.Errorf("umount %s: %v %s", mnt, err, out)
		}
	})
	return mnt
}
