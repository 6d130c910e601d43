//go:build unix

package preflight

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// macOS's way, run wherever lsof is (Debian: apt-get install lsof): a port
// this test listens on is held by this test's process.
func TestFindHoldersLsofFindsThisProcess(t *testing.T) {
	if _, err := exec.LookPath("lsof"); err != nil {
		if _, err := os.Stat("/usr/sbin/lsof"); err != nil {
			t.Skip("no lsof")
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	hs, err := findHoldersLsof(port)
	require.NoError(t, err)
	require.Len(t, hs, 1)
	assert.Equal(t, os.Getpid(), hs[0].PID)
	exe, err := os.Executable()
	require.NoError(t, err)
	assert.Contains(t, hs[0].Command, filepath.Base(exe), "the command line, from ps")

	require.NoError(t, l.Close())
	hs, err = findHoldersLsof(port)
	require.NoError(t, err, "nothing listens: lsof's exit status 1 is no error")
	assert.Empty(t, hs)
}
