//go:build linux

package supervisorreceiver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A planted temporary file (here a symlink to a file the collector could
// write as root) is never written through: the record goes into a file
// created new, and the planted link's target keeps its content.
func TestRunRecordWriteFollowsNoPlantedTemporaryFile(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep me\n"), 0o600))
	path := filepath.Join(dir, "server.run.json")
	require.NoError(t, os.Symlink(victim, path+".tmp"))

	require.NoError(t, writeRunRecord(path, runRecord{PGID: 4242, Token: "t"}))
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep me\n", string(b))
	rec, ok, err := readRunRecord(path)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, 4242, rec.PGID)
	st, err := os.Lstat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode(), "a regular file, ours alone")
}

// A missing data directory is created 0700.
func TestRunRecordDirectoryIsCreatedPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", "server.run.json")
	require.NoError(t, writeRunRecord(path, runRecord{PGID: 4242}))
	st, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), st.Mode().Perm())
}

// A record anyone but this collector's user could have written or swapped
// is refused, with the reason, and nothing in it is believed.
func TestRunRecordIsTrustedOnlyWhenOurs(t *testing.T) {
	good := []byte(`{"pgid":4242,"argv":["sleep"],"token":"t"}` + "\n")
	type plantCase struct {
		plant func(t *testing.T, path string)
		why   string
	}
	cases := map[string]plantCase{
		"a symlink to a record": {func(t *testing.T, path string) {
			other := filepath.Join(t.TempDir(), "elsewhere.json")
			require.NoError(t, os.WriteFile(other, good, 0o600))
			require.NoError(t, os.Symlink(other, path))
		}, "symbolic link"},
		"group-writable": {func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, good, 0o600))
			require.NoError(t, os.Chmod(path, 0o620))
		}, "mode 0620"},
		"readable by others": {func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, good, 0o600))
			require.NoError(t, os.Chmod(path, 0o604))
		}, "mode 0604"},
		"a FIFO": {func(t *testing.T, path string) {
			require.NoError(t, syscall.Mkfifo(path, 0o600))
		}, "not a regular file"},
		"over 64 KiB": {func(t *testing.T, path string) {
			big := append([]byte(`{"pgid":4242,"argv":["`), bytes.Repeat([]byte("x"), 70<<10)...)
			require.NoError(t, os.WriteFile(path, append(big, `"]}`...), 0o600))
		}, "over 64 KiB"},
		"in a group-writable directory": {func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, good, 0o600))
			require.NoError(t, os.Chmod(filepath.Dir(path), 0o770))
		}, "mode 0770"},
	}
	if os.Geteuid() == 0 {
		cases["owned by another user"] = plantCase{func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, good, 0o600))
			require.NoError(t, os.Chown(path, 65534, 65534))
		}, "owned by uid 65534"}
		cases["in another user's directory"] = plantCase{func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, good, 0o600))
			require.NoError(t, os.Chown(filepath.Dir(path), 65534, 65534))
		}, "owned by uid 65534"}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "server.run.json")
			c.plant(t, path)
			done := make(chan struct{})
			var ok bool
			var err error
			go func() { _, ok, err = readRunRecord(path); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("reading the record blocked")
			}
			assert.False(t, ok)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.why)
		})
	}
}

// A record in a directory others can write is not written either: the
// next collector would not believe it.
func TestRunRecordIsNotWrittenWhereOthersCanWrite(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	err := writeRunRecord(filepath.Join(dir, "server.run.json"), runRecord{PGID: 4242})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "mode 0777"), err.Error())
}

// Where the environment can be read, the command line alone proves
// nothing: a group that runs the recorded argv without the run token (a
// stranger who copied it, or a recycled pgid) is left alone.
func TestLeftoverArgvAloneEndsNothing(t *testing.T) {
	argv := []string{"sh", "-c", "sleep 310 & sleep 311 & wait"}
	pgid := startGroup(t, argv)
	rec := runRecord{PGID: pgid, Argv: argv, Token: "tok5", Started: time.Now().Add(-time.Minute)}
	assert.Equal(t, 0, endLeftover(context.Background(), rec, time.Second))
	assert.Len(t, liveInGroup(pgid), 3)
	assert.False(t, LeftoverEngine(writeRecord(t, rec)), "the preflight's check is the same")
}

// A leader with another start time than the recorded engine's: the pgid
// is someone else's now, even if its members carried the token.
func TestLeftoverRecycledLeaderEndsNothing(t *testing.T) {
	argv := []string{"sh", "-c", "sleep 312 & sleep 313 & wait"}
	pgid := startGroup(t, argv, runTokenEnv+"=tok6")
	rec := runRecord{PGID: pgid, Argv: argv, Token: "tok6", LeaderStart: processStart(pgid) - 5000}
	assert.Equal(t, 0, endLeftover(context.Background(), rec, time.Second))
	assert.Len(t, liveInGroup(pgid), 3)
	rec.LeaderStart = processStart(pgid)
	assert.True(t, LeftoverEngine(writeRecord(t, rec)), "with the right start time it is our leftover")
}

// This collector's own process and group are never members, whatever the
// record says.
func TestLeftoverNeverNamesThisCollector(t *testing.T) {
	argv, err := os.ReadFile("/proc/self/cmdline")
	require.NoError(t, err)
	rec := runRecord{PGID: syscall.Getpgrp(), Argv: strings.Split(strings.TrimSuffix(string(argv), "\x00"), "\x00"), Started: time.Now().Add(-time.Hour)}
	assert.Empty(t, leftoverMembers(context.Background(), rec))
}

func writeRecord(t *testing.T, rec runRecord) string {
	path := filepath.Join(t.TempDir(), "server.run.json")
	require.NoError(t, writeRunRecord(path, rec))
	return path
}
