package kvcachereceiver

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a lineHandler that keeps the lines it is given; it settles
// on a line "settle".
type recorder struct {
	lines   []string
	settled bool
}

func (r *recorder) HandleLine(line []byte, _ time.Time) {
	r.lines = append(r.lines, string(line))
	r.settled = r.settled || string(line) == "settle"
}
func (r *recorder) Settled() bool { return r.settled }
func (r *recorder) Reset()        { *r = recorder{} }

// take returns the lines handled since the last take.
func (r *recorder) take() []string {
	l := r.lines
	r.lines = nil
	return l
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func newTestFollower(t *testing.T, readBack int64) (*follower, *recorder, string) {
	path := filepath.Join(t.TempDir(), "server.log")
	r := &recorder{}
	f := newFollower(path, readBack, r)
	t.Cleanup(func() { _ = f.Close() })
	return f, r, path
}

func TestFollowReadsOnlyWhatWasAppended(t *testing.T) {
	f, r, path := newTestFollower(t, 1<<20)
	appendFile(t, path, "one\ntwo\n")
	require.NoError(t, f.Poll(readAt))
	assert.Equal(t, []string{"one", "two"}, r.take())
	require.NoError(t, f.Poll(readAt))
	assert.Empty(t, r.take(), "nothing new, nothing read")
	appendFile(t, path, "three\n")
	require.NoError(t, f.Poll(readAt))
	assert.Equal(t, []string{"three"}, r.take())
	assert.Equal(t, int64(len("one\ntwo\nthree\n")), f.offset)
}

func TestFollowNeverHandsOnAHalfWrittenLine(t *testing.T) {
	f, r, path := newTestFollower(t, 1<<20)
	appendFile(t, path, "one\n2026-08-22 17:01:15,007 - INFO - Prompt Ca")
	require.NoError(t, f.Poll(readAt))
	assert.Equal(t, []string{"one"}, r.take())
	appendFile(t, path, "che: 4 sequences, 0.03 GB\n")
	require.NoError(t, f.Poll(readAt))
	assert.Equal(t, []string{"2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 0.03 GB"}, r.take())
}

func TestFollowAFileThatDoesNotExistYet(t *testing.T) {
	f, r, path := newTestFollower(t, 1<<20)
	err := f.Poll(readAt)
	require.ErrorIs(t, err, fs.ErrNotExist)
	appendFile(t, path, "first\n")
	require.NoError(t, f.Poll(readAt))
	assert.Equal(t, []string{"first"}, r.take())
}

func TestFollowRotationByRename(t *testing.T) {
	f, r, path := newTestFollower(t, 1<<20)
	appendFile(t, path, "old 1\n")
	require.NoError(t, f.Poll(readAt))
	assert.Equal(t, []string{"old 1"}, r.take())

	// The writer adds to the old file, renames it away (as lumberjack does)
	// and starts a new one; the follower polls once after all of it.
	appendFile(t, path, "old 2\nold 3 split across ")
	require.NoError(t, os.Rename(path, path+".1"))
	err := f.Poll(readAt)
	assert.ErrorIs(t, err, fs.ErrNotExist, "no log at the path between rename and create")
	appendFile(t, path+".1", "files? no: only a late write\n")
	appendFile(t, path, "new 1\nnew 2\n")
	require.NoError(t, f.Poll(readAt))
	assert.Equal(t, []string{"old 2", "old 3 split across files? no: only a late write", "new 1", "new 2"}, r.take(),
		"the rest of the old file first, then the new one from its start")
	appendFile(t, path, "new 3\n")
	require.NoError(t, f.Poll(readAt))
	assert.Equal(t, []string{"new 3"}, r.take())
}

// A writer that rotates between two writes of a pipe's output can cut a
// line in two: its start ends the old file, its end begins the new one.
func TestALineSplitByRotationIsJoined(t *testing.T) {
	f, r, path := newTestFollower(t, 1<<20)
	appendFile(t, path, "a\n2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 seq")
	require.NoError(t, f.Poll(readAt))
	require.NoError(t, os.Rename(path, path+".1"))
	appendFile(t, path, "uences, 0.03 GB\nb\n")
	require.NoError(t, f.Poll(readAt))
	assert.Equal(t, []string{"a", "2026-08-22 17:01:15,007 - INFO - Prompt Cache: 4 sequences, 0.03 GB", "b"}, r.take())
}

func TestFollowCopyTruncate(t *testing.T) {
	f, r, path := newTestFollower(t, 1<<20)
	appendFile(t, path, "before truncation, a long line\nand another\n")
	require.NoError(t, f.Poll(readAt))
	r.take()
	// logrotate's copytruncate: copy away, truncate in place, the writer
	// goes on in the same file.
	require.NoError(t, os.Truncate(path, 0))
	appendFile(t, path, "after 1\n")
	require.NoError(t, f.Poll(readAt))
	assert.Equal(t, []string{"after 1"}, r.take())
}

// Truncated and written past the old offset between two polls: the size
// alone does not show it, the file's first bytes do.
func TestFollowTruncationHiddenByNewWrites(t *testing.T) {
	f, r, path := newTestFollower(t, 1<<20)
	appendFile(t, path, "old line\n")
	require.NoError(t, f.Poll(readAt))
	r.take()
	require.NoError(t, os.Truncate(path, 0))
	appendFile(t, path, "new content, longer than the old\nsecond\n")
	require.NoError(t, f.Poll(readAt))
	assert.Equal(t, []string{"new content, longer than the old", "second"}, r.take())
}

func TestFollowDeletedAndRecreated(t *testing.T) {
	f, r, path := newTestFollower(t, 1<<20)
	appendFile(t, path, "one\n")
	require.NoError(t, f.Poll(readAt))
	r.take()
	require.NoError(t, os.Remove(path))
	appendFile(t, path, "fresh\n")
	require.NoError(t, f.Poll(readAt))
	assert.Equal(t, []string{"fresh"}, r.take())
}

func TestStartReadsBackOnlyAsFarAsTheLatestState(t *testing.T) {
	f, r, path := newTestFollower(t, 8<<20)
	filler := strings.Repeat("2026-08-22 17:00:02,650 - INFO - Prompt processing progress: 2048/3120\n", 40000) // ~2.9 MB
	appendFile(t, path, "settle\n"+filler+"settle\n"+filler[:71*100]+"tail\n")
	require.NoError(t, f.Poll(readAt))
	lines := r.take()
	require.NotEmpty(t, lines)
	assert.Equal(t, "tail", lines[len(lines)-1])
	assert.Contains(t, lines, "settle")
	assert.Less(t, len(lines), 2000, "only the last window (64 KiB) is handed on, not the whole file")
	for _, l := range lines {
		assert.True(t, l == "settle" || l == "tail" || strings.HasPrefix(l, "2026-08-22 17:00:02,650 - INFO - Prompt"), "a whole line: %q", l)
	}
}

func TestStartLooksFurtherBackUntilTheStateIsFound(t *testing.T) {
	f, r, path := newTestFollower(t, 8<<20)
	filler := strings.Repeat("2026-08-22 17:00:02,650 - INFO - Prompt processing progress: 2048/3120\n", 20000) // ~1.4 MB
	appendFile(t, path, filler+"settle\n"+filler)
	require.NoError(t, f.Poll(readAt))
	assert.True(t, r.Settled(), "found 1.4 MB back")
	assert.Contains(t, r.lines, "settle")
}

func TestStartGivesUpAtTheReadBackBound(t *testing.T) {
	f, r, path := newTestFollower(t, 1<<20)
	filler := strings.Repeat("2026-08-22 17:00:02,650 - INFO - Prompt processing progress: 2048/3120\n", 20000) // ~1.4 MB
	appendFile(t, path, "settle\n"+filler)
	require.NoError(t, f.Poll(readAt))
	assert.False(t, r.Settled(), "the state is further back than initial_read_back")
	appendFile(t, path, "settle\n")
	require.NoError(t, f.Poll(readAt))
	assert.True(t, r.Settled(), "and is found once it is logged again")
}

func TestFarBehindJumpsToTheEnd(t *testing.T) {
	f, r, path := newTestFollower(t, 256<<10)
	appendFile(t, path, "start\n")
	require.NoError(t, f.Poll(readAt))
	r.take()
	filler := strings.Repeat("2026-08-22 17:00:02,650 - INFO - Prompt processing progress: 2048/3120\n", 10000) // ~720 KB
	appendFile(t, path, "settle\n"+filler+"settle\nlast\n")
	require.NoError(t, f.Poll(readAt))
	lines := r.take()
	assert.Equal(t, []string{"settle", "last"}, lines[len(lines)-2:])
	assert.Less(t, len(lines), 2000, "the 720 KB in between are skipped")
}

func TestFollowingAllocatesNothingPerLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.log")
	a := &assembler{}
	f := newFollower(path, 64<<20, a)
	defer f.Close()
	lines := strings.Join(block("2026-08-22 17:01:15,007", usage{3, 20_000_000}, usage{1, 10_000_000}, usage{}), "\n") + "\n" +
		`127.0.0.1 - - [22/Aug/2026 17:01:15] "POST /v1/chat/completions HTTP/1.1" 200 -` + "\n"
	appendFile(t, path, lines)
	require.NoError(t, f.Poll(readAt))

	file, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	defer file.Close()
	allocsFor := func(requests int) float64 {
		chunk := []byte(strings.Repeat(lines, requests))
		return testing.AllocsPerRun(5, func() {
			_, _ = file.Write(chunk)
			_ = f.Poll(readAt)
		})
	}
	few, many := allocsFor(10), allocsFor(2000)
	assert.Equal(t, few, many, "a poll allocates the same for 50 lines as for 10,000")
	_, ok := a.Latest()
	assert.True(t, ok)
}

// An engine restarted by hand truncates its log and writes the same
// banner, and between two polls grows past where reading stopped: the
// first bytes match, the bytes before the offset do not, and the new
// content is read from its start, never from the middle of a line.
func TestFollowRestartWithTheSameBannerIsReadFromItsStart(t *testing.T) {
	f, r, path := newTestFollower(t, 1<<20)
	banner := strings.Repeat("2026-08-22 17:00:00,000 - INFO - Starting httpd at 127.0.0.1 on port 8081...\n", 8) // longer than the fingerprint
	appendFile(t, path, banner+"first run 1\n")
	require.NoError(t, f.Poll(readAt))
	r.take()
	require.NoError(t, os.Truncate(path, 0))
	appendFile(t, path, banner+"second run, a longer line 1\nsecond run 2\n")
	require.NoError(t, f.Poll(readAt))
	got := r.take()
	require.NotEmpty(t, got)
	assert.Equal(t, banner[:strings.IndexByte(banner, '\n')], got[0], "read from the start")
	assert.Equal(t, []string{"second run, a longer line 1", "second run 2"}, got[len(got)-2:])
}

// A deleted log is let go once its last lines are read, so its disk space
// is freed; the file that comes back at the path is read from its start.
func TestFollowLetsGoOfADeletedLog(t *testing.T) {
	f, r, path := newTestFollower(t, 1<<20)
	appendFile(t, path, "one\n")
	require.NoError(t, f.Poll(readAt))
	held, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	defer held.Close()
	require.NoError(t, os.Remove(path))
	_, err = held.WriteString("written after the delete\n")
	require.NoError(t, err)

	assert.ErrorIs(t, f.Poll(readAt), fs.ErrNotExist)
	assert.Equal(t, []string{"one", "written after the delete"}, r.take(), "the last lines are still read")
	assert.Nil(t, f.file, "the deleted file is not held open")
	assert.ErrorIs(t, f.Poll(readAt), fs.ErrNotExist)

	appendFile(t, path, "back 1\nback 2\n")
	require.NoError(t, f.Poll(readAt))
	assert.Equal(t, []string{"back 1", "back 2"}, r.take())
}

// A FIFO at the log path is refused at once: opening it for reading would
// wait for a writer forever, and the scrape with it.
func TestFollowRefusesAFIFO(t *testing.T) {
	f, _, path := newTestFollower(t, 1<<20)
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	done := make(chan error, 1)
	go func() { done <- f.Poll(readAt) }()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not a regular file")
	case <-time.After(5 * time.Second):
		t.Fatal("Poll blocked on a FIFO")
	}
}
