package hwreceiver

import (
	"os"
	"strings"
	"testing"

	"github.com/shirou/gopsutil/v4/process"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCmdlineReaderIsGopsutils(t *testing.T) {
	proc := t.TempDir()
	long := strings.Repeat("x", 9000) // more than the first buffer
	cases := map[string]string{
		"1": "python3\x00-m\x00mlx_lm.server\x00--port\x008081\x00",
		"2": "",                                // a kernel thread
		"3": "\x00a\x00\x00b c\x00\x00",        // empty arguments
		"4": "setproctitle-style line",         // no NUL at all
		"5": "bin\x00" + long + "\x00tail\x00", // longer than the buffer
		"6": "caf\xc3\xa9\x00\xff\x00",         // UTF-8 and a stray byte
	}
	files := map[string]string{}
	for pid, body := range cases {
		files[pid+"/cmdline"] = body
	}
	writeTree(t, proc, files)
	ctx := withHostProc(proc)
	var r cmdlineReader
	for pid := range cases {
		n := int32(pid[0] - '0') // one-digit names
		want, err := (&process.Process{Pid: n}).CmdlineWithContext(ctx)
		require.NoError(t, err)
		got, err := r.read(ctx, n)
		require.NoError(t, err)
		assert.Equal(t, want, got, "pid %s", pid)
	}
	_, err := r.read(ctx, 9)
	assert.ErrorIs(t, err, os.ErrNotExist, "a process gone since the listing")
}

func TestCmdlineReaderReadsThisProcess(t *testing.T) {
	want, err := (&process.Process{Pid: int32(os.Getpid())}).Cmdline()
	require.NoError(t, err)
	var r cmdlineReader
	got, err := r.read(t.Context(), int32(os.Getpid()))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Contains(t, got, "hwreceiver.test")
}
