//go:build linux

package preflight

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// findHoldersIn over a /proc tree made from the captures: pid 1234 owns
// the listener of 127.0.0.1:29102; no process owns the uid 65534 listener
// of :29300 that this user may see.
func TestFindHoldersInAProcTree(t *testing.T) {
	littleEndian(t)
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "net"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "net", "tcp"), readTestdata(t, "proc_net_tcp.txt"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "net", "tcp6"), readTestdata(t, "proc_net_tcp6_dualstack.txt"), 0o644))
	fd := filepath.Join(root, "1234", "fd")
	require.NoError(t, os.MkdirAll(fd, 0o755))
	require.NoError(t, os.Symlink("/dev/null", filepath.Join(fd, "0")))
	require.NoError(t, os.Symlink("socket:[1455198]", filepath.Join(fd, "3")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "1234", "cmdline"), []byte("/usr/bin/python3\x00/tmp/listen.py\x00"), 0o644))
	// A kernel thread: no command line, a name.
	fd = filepath.Join(root, "99", "fd")
	require.NoError(t, os.MkdirAll(fd, 0o755))
	require.NoError(t, os.Symlink("socket:[629]", filepath.Join(fd, "7")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "99", "cmdline"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "99", "comm"), []byte("sshd\n"), 0o644))

	hs, err := findHoldersIn(root, 29102)
	require.NoError(t, err)
	assert.Equal(t, []Holder{{PID: 1234, Command: "/usr/bin/python3 /tmp/listen.py", UID: 0, Listening: true}}, hs)

	hs, err = findHoldersIn(root, 2024)
	require.NoError(t, err)
	assert.Equal(t, []Holder{{PID: 99, Command: "sshd", UID: 0, Listening: true}}, hs)

	hs, err = findHoldersIn(root, 29300)
	require.NoError(t, err)
	assert.Equal(t, []Holder{{UID: 65534, Listening: true}}, hs)
	assert.Equal(t, "held by a process of uid 65534 (its pid is not readable by this user)", describeHolders(hs, nil, 29300))

	hs, err = findHoldersIn(root, 9102)
	require.NoError(t, err)
	assert.Empty(t, hs)
	assert.Contains(t, describeHolders(hs, nil, 9102), "no process holding it is visible from here")
}

// The real /proc: a port this test holds is held by this test's process.
func TestFindHoldersFindsThisProcess(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	hs, err := findHolders(port)
	require.NoError(t, err)
	require.Len(t, hs, 1)
	assert.Equal(t, os.Getpid(), hs[0].PID)
	assert.True(t, hs[0].Listening)
	exe, err := os.Executable()
	require.NoError(t, err)
	assert.Contains(t, hs[0].Command, filepath.Base(exe))
	assert.Equal(t, fmt.Sprintf("held by pid %d (%s)", os.Getpid(), hs[0].Command), describeHolders(hs, nil, port))
}
