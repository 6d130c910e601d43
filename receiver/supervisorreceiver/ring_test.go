//go:build linux

package supervisorreceiver

import (
	"context"
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

func TestWithRunTokenOnlyForMlxLaunch(t *testing.T) {
	assert.Equal(t, []string{"/venv/bin/mlx.launch", "--env", runTokenEnv + "=tok", "--hostfile", "h.json", "--", "python3"},
		withRunToken([]string{"/venv/bin/mlx.launch", "--hostfile", "h.json", "--", "python3"}, "tok"))
	assert.Equal(t, []string{"mlx_lm.server", "--port", "8081"}, withRunToken([]string{"mlx_lm.server", "--port", "8081"}, "tok"))
}

// The supervisor starts mlx.launch with the run token as --env, which
// mlx.launch exports on every host it starts a rank on, over ssh too; the
// record names the command as it was run.
func TestMlxLaunchGetsTheRunTokenForItsRanks(t *testing.T) {
	dir := t.TempDir()
	launch := filepath.Join(dir, "mlx.launch")
	require.NoError(t, os.WriteFile(launch, []byte("#!/bin/sh\nsleep 600\n"), 0o700))
	cfg := fastConfig(t, "http://127.0.0.1:1", launch, "--hostfile", "hosts.json", "--backend", "ring")
	startSupervisor(t, cfg)
	rec := waitForRecord(t, cfg.runFile())
	want := []string{launch, "--env", runTokenEnv + "=" + rec.Token, "--hostfile", "hosts.json", "--backend", "ring"}
	assert.Equal(t, want, rec.Argv)
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(rec.PGID) + "/cmdline")
	require.NoError(t, err)
	assert.Equal(t, append([]string{"/bin/sh"}, want...), strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00"))
}

// startSession runs argv in a session of its own with env added: a rank
// mlx.launch started over ssh on this host (sshd's child, not in the
// engine's group).
func startSession(t *testing.T, env ...string) *exec.Cmd {
	cmd := exec.Command("sleep", "320")
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	return cmd
}

// A leftover ring: mlx.launch's group, and rank 0's mlx_lm.server, which
// it started over ssh and so runs outside that group. The run token in
// rank 0's environment proves it ours: it is ended with the group, and the
// preflight sees the leftover. A process outside the group with another
// token is left alone.
func TestLeftoverRankOutsideTheGroupIsKnownByItsToken(t *testing.T) {
	pgid := startGroup(t, []string{"sh", "-c", "sleep 321 & sleep 322 & wait"}, runTokenEnv+"=tok7")
	rank0 := startSession(t, runTokenEnv+"=tok7")
	stranger := startSession(t, runTokenEnv+"=someone-else")
	rec := runRecord{PGID: pgid, Argv: []string{"mlx.launch"}, Token: "tok7"}
	assert.True(t, LeftoverEngine(writeRecord(t, rec)))

	assert.Equal(t, 4, endLeftover(context.Background(), rec, time.Second))
	assert.Empty(t, liveInGroup(pgid))
	assert.Empty(t, liveInGroup(rank0.Process.Pid), "rank 0 is ended too")
	assert.Len(t, liveInGroup(stranger.Process.Pid), 1, "another run's process is left alone")
}
