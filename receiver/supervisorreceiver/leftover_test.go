//go:build linux

package supervisorreceiver

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// startGroup runs argv in a process group of its own with env added, as an
// engine an earlier collector started (no parent-death signal: that
// collector is gone). It returns the group id.
func startGroup(t *testing.T, argv []string, env ...string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	go func() { _ = cmd.Wait() }() // reap the leader, as init would
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	pgid := cmd.Process.Pid
	// Wait until the shell has started both of its children.
	require.Eventually(t, func() bool { return len(liveInGroup(pgid)) == 3 }, 5*time.Second, 10*time.Millisecond)
	return pgid
}

// waitForRecord waits until the run file holds a record, and returns it.
func waitForRecord(t *testing.T, path string) runRecord {
	var rec runRecord
	require.Eventually(t, func() bool {
		r, ok, err := readRunRecord(path)
		rec = r
		return ok && err == nil
	}, 5*time.Second, 10*time.Millisecond)
	return rec
}

// liveInGroup lists the group's processes that are not zombies.
func liveInGroup(pgid int) []int {
	var live []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
		if len(f) > 2 && string(f[0]) != "Z" && string(f[2]) == strconv.Itoa(pgid) {
			live = append(live, pid)
		}
	}
	return live
}

// A launcher and the two ranks it started, left by a collector that was
// killed: the next supervisor ends all three before it starts its engine.
func TestLeftoverEngineGroupIsEndedAtStart(t *testing.T) {
	argv := []string{"sh", "-c", "sleep 300 & sleep 301 & wait"}
	pgid := startGroup(t, argv, runTokenEnv+"=tok1")
	cfg := fastConfig(t, "http://127.0.0.1:1", "sleep", "600")
	require.NoError(t, writeRunRecord(cfg.runFile(), runRecord{PGID: pgid, Argv: argv, Token: "tok1"}))

	startSupervisor(t, cfg)
	assert.Eventually(t, func() bool { return len(liveInGroup(pgid)) == 0 }, 5*time.Second, 20*time.Millisecond,
		"the leftover launcher and its ranks are gone")
}

// The launcher died (Linux's parent-death signal reaches only it) and its
// ranks run on with other command lines: the run token in their
// environment proves them ours.
func TestLeftoverRanksAreKnownByTheirRunToken(t *testing.T) {
	pgid := startGroup(t, []string{"sh", "-c", "sleep 302 & sleep 303 & wait"}, runTokenEnv+"=tok2")
	rec := runRecord{PGID: pgid, Argv: []string{"mlx.launch", "--backend", "ring"}, Token: "tok2"}
	assert.Equal(t, 3, endLeftover(context.Background(), rec, time.Second))
	assert.Empty(t, liveInGroup(pgid))
}

// A group id the system gave to an unrelated program since: neither its
// command line nor a token matches, and nothing is signalled.
func TestLeftoverRecordNeverEndsAStranger(t *testing.T) {
	pgid := startGroup(t, []string{"sh", "-c", "sleep 304 & sleep 305 & wait"}, runTokenEnv+"=someone-else")
	for _, rec := range []runRecord{
		{PGID: pgid, Argv: []string{"mlx_lm.server", "--port", "8081"}, Token: "tok3"},
		{PGID: pgid, Argv: []string{"sleep"}, Token: ""},
	} {
		assert.Equal(t, 0, endLeftover(context.Background(), rec, time.Second))
	}
	assert.Len(t, liveInGroup(pgid), 3)
}

// The supervisor records its engine's group while it runs, and forgets it
// when it stops the engine itself.
func TestRunRecordIsWrittenWhileTheEngineRuns(t *testing.T) {
	cfg := fastConfig(t, "http://127.0.0.1:1", "sleep", "600")
	s := newSupervisor(cfg, zaptest.NewLogger(t))
	require.NoError(t, s.start(context.Background(), nil))
	rec := waitForRecord(t, cfg.runFile())
	assert.Equal(t, []string{"sleep", "600"}, rec.Argv)
	assert.Equal(t, self(), rec.Owner, "the record names this collector as its owner")
	assert.Len(t, liveInGroup(rec.PGID), 1)
	env, err := os.ReadFile("/proc/" + strconv.Itoa(rec.PGID) + "/environ")
	require.NoError(t, err)
	assert.Contains(t, string(env), runTokenEnv+"="+rec.Token+"\x00", "the engine carries its run token")

	require.NoError(t, s.shutdown(context.Background()))
	_, err = os.Stat(cfg.runFile())
	assert.True(t, os.IsNotExist(err), "a stopped engine leaves no record")
}

// A record whose owner still runs is not a leftover: another collector's
// engine is left alone, and so is its record.
func TestARecordOfARunningCollectorIsLeftAlone(t *testing.T) {
	argv := []string{"sh", "-c", "sleep 306 & sleep 307 & wait"}
	pgid := startGroup(t, argv, runTokenEnv+"=tok4")
	owner := exec.Command("sleep", "300") // stands in for the other collector
	require.NoError(t, owner.Start())
	t.Cleanup(func() { _ = owner.Process.Kill(); _ = owner.Wait() })
	cfg := fastConfig(t, "http://127.0.0.1:1", "sleep", "600")
	rec := runRecord{PGID: pgid, Argv: argv, Token: "tok4", Owner: processID{PID: owner.Process.Pid, Start: processStart(owner.Process.Pid)}}
	require.NoError(t, writeRunRecord(cfg.runFile(), rec))

	s := startSupervisor(t, cfg)
	// Its own engine up: the look for a leftover, which comes first, is over.
	require.Eventually(t, func() bool { return s.snap().up }, 10*time.Second, 10*time.Millisecond)
	assert.Len(t, liveInGroup(pgid), 3, "the other collector's engine runs on")
	got, ok, err := readRunRecord(cfg.runFile())
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "tok4", got.Token, "its record is untouched")

	// Once that collector is gone, its engine is a leftover.
	require.NoError(t, owner.Process.Kill())
	_ = owner.Wait()
	assert.False(t, ownerRuns(rec))
}

// Two supervisors of one collector on one run file: the second keeps no
// record and never ends the first one's engine.
func TestTwoSupervisorsOnOneRunFile(t *testing.T) {
	first := fastConfig(t, "http://127.0.0.1:1", "sleep", "601")
	startSupervisor(t, first)
	rec := waitForRecord(t, first.runFile())

	second := fastConfig(t, "http://127.0.0.1:1", "sleep", "602")
	second.RunFile = first.runFile()
	s2 := startSupervisor(t, second)
	// Its own engine up: the look for a leftover, which comes first, is over.
	require.Eventually(t, func() bool { return s2.snap().up }, 10*time.Second, 10*time.Millisecond)
	assert.Len(t, liveInGroup(rec.PGID), 1, "the first engine runs on")
	got, _, _ := readRunRecord(first.runFile())
	assert.Equal(t, rec.Token, got.Token, "the first engine's record stays")
}

// The default run file is named after the server log, so supervisors with
// logs of their own have records of their own.
func TestDefaultRunFileFollowsTheLog(t *testing.T) {
	c := &Config{Log: LogConfig{Path: "/data/a/server.log"}}
	assert.Equal(t, "/data/a/server.run.json", c.runFile())
	c.Log.Path = "/data/a/rank1.log"
	assert.Equal(t, "/data/a/rank1.run.json", c.runFile())
	c.RunFile = "/elsewhere.json"
	assert.Equal(t, "/elsewhere.json", c.runFile())
}
