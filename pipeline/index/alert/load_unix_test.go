//go:build unix

package alert

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A FIFO or a device as the rules file is refused at once: it neither
// hangs the open nor is read forever.
func TestLoad_RefusesFIFOAndDevices(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	t.Cleanup(func() {
		// Lets a Load blocked in open (a regression) return.
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	_, err := loadWithin(t, fifo)
	require.ErrorIs(t, err, ErrRulesFile)
	require.ErrorContains(t, err, "not a regular file")

	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	link := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.Symlink("/dev/zero", link))
	_, err = loadWithin(t, link)
	require.ErrorIs(t, err, ErrRulesFile)
}
