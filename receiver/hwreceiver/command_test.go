//go:build unix

package hwreceiver

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunnerReturnsOutput(t *testing.T) {
	fakeCommands(t, map[string]string{"hello": `echo "hello $1"; echo "locale=$LC_ALL"`})
	out, err := newCommandRunner(5*time.Second).run(context.Background(), "hello", "world")
	require.NoError(t, err)
	assert.Equal(t, "hello world\nlocale=C\n", string(out), "LC_ALL=C so numbers print the same in any locale")
}

func TestRunnerMissingCommand(t *testing.T) {
	fakeCommands(t, nil)
	_, err := newCommandRunner(5*time.Second).run(context.Background(), "powermetrics")
	require.ErrorIs(t, err, errCommandNotFound)
	assert.Contains(t, err.Error(), "powermetrics")
}

func TestRunnerFallbackDirs(t *testing.T) {
	fakeCommands(t, nil)
	sbin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(sbin, "sysctl"), []byte("#!/bin/sh\necho hw.memsize: 1\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(sbin, "notexec"), []byte("#!/bin/sh\n"), 0o644))
	r := newCommandRunner(5 * time.Second)
	r.fallbackDirs = []string{sbin}
	out, err := r.run(context.Background(), "sysctl")
	require.NoError(t, err)
	assert.Equal(t, "hw.memsize: 1\n", string(out))
	_, err = r.run(context.Background(), "notexec")
	assert.ErrorIs(t, err, errCommandNotFound, "a file that is not executable is not a command")
}

func TestRunnerNonZeroExit(t *testing.T) {
	fakeCommands(t, map[string]string{"sudo": "echo partial\necho 'sudo: a password is required' >&2\nexit 1"})
	out, err := newCommandRunner(5*time.Second).run(context.Background(), "sudo", "-n", "powermetrics")
	require.Error(t, err)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, err.Error(), "sudo exited with status 1: sudo: a password is required")
	assert.Equal(t, "partial\n", string(out), "what was printed comes back with the error")
}

func TestRunnerErrorFromStdoutWhenStderrIsEmpty(t *testing.T) {
	fakeCommands(t, map[string]string{"nvidia-smi": "echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.'; exit 9"})
	_, err := newCommandRunner(5*time.Second).run(context.Background(), "nvidia-smi")
	assert.ErrorContains(t, err, "nvidia-smi exited with status 9: NVIDIA-SMI has failed because")
}

// A command that hangs, with a child of its own holding the output pipe,
// is killed with its whole process group at the timeout.
func TestRunnerKillsAHungCommandAndItsChildren(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	t.Setenv("HW_TEST_PIDS", pidFile)
	fakeCommands(t, map[string]string{"ioreg": `sleep 300 &
echo $! > "$HW_TEST_PIDS"
echo $$ >> "$HW_TEST_PIDS"
echo started
wait`})
	r := newCommandRunner(300 * time.Millisecond)
	out, err := r.run(context.Background(), "ioreg")
	require.ErrorIs(t, err, errCommandTimeout)
	assert.Contains(t, err.Error(), "after 300ms")
	assert.Equal(t, "started\n", string(out))

	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pids := strings.Fields(string(b))
	require.Len(t, pids, 2)
	for _, p := range pids {
		pid, err := strconv.Atoi(p)
		require.NoError(t, err)
		assert.Eventually(t, func() bool { return !processAlive(pid) }, 10*time.Second, 20*time.Millisecond,
			"pid %d (the command or its child) is gone", pid)
	}
}

func TestRunnerParentCancelIsNotATimeout(t *testing.T) {
	fakeCommands(t, map[string]string{"slow": "exec sleep 300"})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	_, err := newCommandRunner(time.Minute).run(ctx, "slow")
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, errors.Is(err, errCommandTimeout))
}

func TestRunnerCapsOutput(t *testing.T) {
	fakeCommands(t, map[string]string{"chatty": "head -c 100000 /dev/zero; echo done >&2"})
	r := newCommandRunner(5 * time.Second)
	r.maxOutput = 1000
	out, err := r.run(context.Background(), "chatty")
	require.ErrorIs(t, err, errOutputTooLarge)
	assert.Len(t, out, 1000, "the first bytes are kept, the rest dropped")
}

func TestCappedBufferNeverFailsAWrite(t *testing.T) {
	b := &cappedBuffer{max: 4}
	n, err := b.Write([]byte("abc"))
	assert.Equal(t, 3, n)
	assert.NoError(t, err)
	n, err = b.Write([]byte("def"))
	assert.Equal(t, 3, n)
	assert.NoError(t, err)
	assert.Equal(t, "abcd", string(b.Bytes()))
	assert.True(t, b.overflow)
}

func TestFirstLine(t *testing.T) {
	assert.Equal(t, "sudo: a password is required", firstLine([]byte("\n  sudo: a password is required\nmore\n")))
	assert.Equal(t, "no error output", firstLine(nil))
}

// processAlive reports whether pid is a live process (a zombie is not).
func processAlive(pid int) bool {
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		return len(f) > 0 && f[0] != "Z"
	} else if _, statErr := os.Stat("/proc/self"); statErr == nil {
		return false // /proc exists and the pid is not in it
	}
	return syscall.Kill(pid, 0) == nil
}
