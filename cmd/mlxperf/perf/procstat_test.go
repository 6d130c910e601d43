package perf

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStatCPU(t *testing.T) {
	// A command name may hold spaces and parentheses: fields are counted
	// from the last ')'. utime 250 and stime 50 ticks: 3 s.
	line := "4242 (mlx (otel) col) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 0 0 20 0 12 0 100 1000000 2000 18446744073709551615\n"
	cpu, err := parseStatCPU([]byte(line))
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, cpu)

	_, err = parseStatCPU([]byte("4242 (x) S 1 2"))
	assert.Error(t, err, "too few fields")
	_, err = parseStatCPU([]byte("no name here"))
	assert.Error(t, err)
}

// cutime and cstime, the children waited for: 70 and 30 ticks, 1 s.
func TestParseStatChildrenCPU(t *testing.T) {
	line := "4242 (python3) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 50 70 30 20 0 12 0 100 1000000 2000 18446744073709551615\n"
	cpu, err := parseStatChildrenCPU([]byte(line))
	require.NoError(t, err)
	assert.Equal(t, time.Second, cpu)
	_, err = parseStatChildrenCPU([]byte("4242 (x) S 1 2 3 4 5 6 7 8 9 10 11 12"))
	assert.Error(t, err, "too few fields")
}

func TestParseVmRSS(t *testing.T) {
	kib, err := parseVmRSS([]byte("Name:\tmlx-otelcol\nVmPeak:\t  900000 kB\nVmRSS:\t   65932 kB\nRssAnon:\t   12160 kB\n"))
	require.NoError(t, err)
	assert.Equal(t, int64(65932), kib)
	_, err = parseVmRSS([]byte("Name:\tkthreadd\n"))
	assert.Error(t, err, "a kernel thread has no VmRSS")
}

// This process, read from /proc, burning CPU for a while: the figures are
// this process's own.
func TestWatchReadsThisProcess(t *testing.T) {
	done := make(chan struct{})
	go func() {
		for end := time.Now().Add(time.Second); time.Now().Before(end); {
		}
		close(done)
	}()
	u, err := Watch(os.Getpid(), time.Second, 100*time.Millisecond)
	<-done
	require.NoError(t, err)
	// How much of a core the spinning goroutine gets is the machine's
	// choice (other work shares the cores): only that it got some, at
	// least a clock tick in a second, is this process's own figure.
	assert.Positive(t, u.Cores, "a goroutine spun for the whole window")
	assert.Positive(t, u.RSSKiB)
	assert.GreaterOrEqual(t, u.MaxRSSKiB, u.RSSKiB)
}
