// Package proctest reads what Linux says of this host in /proc, for tests
// that hold the hardware receiver's figures to it (its unit tests and the
// end-to-end tests of the built binary).
package proctest

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// KBField reads the line "key: N kB" of a /proc file (meminfo, a process's
// status) as N × 1024 bytes; false when the file or the key is not there.
func KBField(t testing.TB, path, key string) (float64, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == key {
			n, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			require.NoError(t, err, l)
			return n * 1024, true
		}
	}
	return 0, false
}

// MeminfoBytes is a /proc/meminfo figure in bytes; the test fails when it
// is not there.
func MeminfoBytes(t testing.TB, key string) float64 {
	t.Helper()
	n, ok := KBField(t, "/proc/meminfo", key)
	if !ok {
		t.Fatalf("no %s in /proc/meminfo", key)
	}
	return n
}

// CPUCount counts the processors /proc/cpuinfo lists.
func CPUCount(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile("/proc/cpuinfo")
	require.NoError(t, err)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "processor") {
			n++
		}
	}
	return n
}
