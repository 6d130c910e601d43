package jsonlexporter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// diskFilling behaves as lumberjack on a disk that fills up: it keeps its
// file open, creating it without O_APPEND as lumberjack does (and opening
// an existing one for appending after a Close), and writes the first
// `room` bytes it is given, then fails as a full disk does (a short write
// with ENOSPC) until room is made again.
type diskFilling struct {
	path string
	room int
	f    *os.File
}

func (d *diskFilling) Write(p []byte) (int, error) {
	if d.f == nil {
		flags := os.O_WRONLY | os.O_APPEND
		if _, err := os.Stat(d.path); os.IsNotExist(err) {
			flags = os.O_CREATE | os.O_WRONLY | os.O_TRUNC
		}
		f, err := os.OpenFile(d.path, flags, 0o644)
		if err != nil {
			return 0, err
		}
		d.f = f
	}
	n := min(len(p), d.room)
	if _, err := d.f.Write(p[:n]); err != nil {
		return 0, err
	}
	d.room -= n
	if n < len(p) {
		return n, syscall.ENOSPC
	}
	return n, nil
}

func (d *diskFilling) Close() error {
	if d.f == nil {
		return nil
	}
	err := d.f.Close()
	d.f = nil
	return err
}

// A batch that meets a full disk halfway leaves nothing of itself: the
// queue retries it whole, and once there is room every line is in the
// file once, none torn.
func TestAFullDiskLeavesNoPartOfABatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "engine.jsonl")
	disk := &diskFilling{path: path, room: 1 << 20}
	w := newWriter(&Config{Path: path, Rotation: RotationConfig{MaxMegabytes: 50, MaxBackups: 1}})
	w.out, w.closer = disk, disk
	t.Cleanup(func() { _ = disk.Close() })

	require.NoError(t, w.push(context.Background(), numbered("line", 0, 10)))
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	disk.room = 300 // part of the next batch fits
	err = w.push(context.Background(), numbered("line", 10, 20))
	require.ErrorIs(t, err, syscall.ENOSPC, "the error goes back to the queue, which retries")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the part written is taken off")

	disk.room = 1 << 20 // room again: the retry
	require.NoError(t, w.push(context.Background(), numbered("line", 10, 20)))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "\x00", "no hole where the part was taken off")
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	require.Len(t, lines, 20)
	for i, l := range lines {
		assert.Contains(t, l, `"line `, "line %d whole", i)
		assert.True(t, strings.HasPrefix(l, "{") && strings.HasSuffix(l, "}"), "line %d is a whole JSON object: %s", i, l)
	}
}
