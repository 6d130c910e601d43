//go:build e2e && fault

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// launcherOverlay runs the simulated engine the way mlx.launch runs its
// ranks: a launcher process whose child is the engine. Linux's
// parent-death signal reaches only the launcher, so a collector killed
// with SIGKILL leaves the engine running on its port, as it does on macOS
// (no parent-death signal at all).
func launcherOverlay(t *testing.T) string {
	t.Helper()
	return commandOverlay(t, "#!/bin/sh\n\"$MLXSIM\" \"$@\"\nexit $?\n", simArgs)
}

// numberedLogOverlay has the engine's file_log receiver follow a log of
// the test's own beside the engine's, numbered.log, so that every line
// written is known whatever the engine prints.
func numberedLogOverlay(t *testing.T) string {
	t.Helper()
	return writeOverlay(t, "numbered.yaml", "receivers:\n  file_log/engine:\n    include:\n      - ${env:MLX_DATA_DIR}/server.log\n      - ${env:MLX_DATA_DIR}/server-*.log\n      - ${env:MLX_DATA_DIR}/numbered.log\n")
}

var faultLine = regexp.MustCompile(`fault-line=(\d+)\b`)

// numberedLines appends n lines "... fault-line=<i>" to dataDir/numbered.log
// at about rate lines a second.
func numberedLines(ctx context.Context, t *testing.T, dataDir string, n, rate int) <-chan int {
	done := make(chan int, 1)
	f, err := os.OpenFile(filepath.Join(dataDir, "numbered.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	require.NoError(t, err)
	go func() {
		defer f.Close()
		i := 0
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for ; i < n && ctx.Err() == nil; <-tick.C {
			for k := 0; k < rate/100 && i < n; k++ {
				fmt.Fprintf(f, "2026-08-22 17:00:00,000 - INFO - Prompt processing progress: fault-line=%d\n", i)
				i++
			}
		}
		done <- i
	}()
	return done
}

// tallyNumbers counts, per number, the bodies that carry one (number
// finds it; nil for a body without).
func tallyNumbers(seen map[int]int, number *regexp.Regexp, bodies ...string) {
	for _, b := range bodies {
		if m := number.FindStringSubmatch(b); m != nil {
			n, _ := strconv.Atoi(m[1])
			seen[n]++
		}
	}
}

// numberedInJSONL counts, per line number, the records in the JSONL file.
func numberedInJSONL(t *testing.T, dataDir string) map[int]int {
	seen := map[int]int{}
	for _, r := range readJSONL(t, dataDir) {
		tallyNumbers(seen, faultLine, r.Body)
	}
	return seen
}

// lostAndDuplicated compares what arrived with the numbers that had to.
func lostAndDuplicated(seen map[int]int, want []int) (lost, dup int) {
	for _, i := range want {
		switch c := seen[i]; {
		case c == 0:
			lost++
		case c > 1:
			dup += c - 1
		}
	}
	return lost, dup
}

// upTo is 0, 1, ... n-1.
func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// The collector is killed with SIGKILL mid-traffic and started again on
// the same data directory and engine port. The engine the dead collector
// left behind is ended by the new one (not found by name: by its run
// record), the new engine serves, and every log line written before,
// during and after arrives in the JSONL file exactly once.
func TestFaultCollectorKilledAndRestarted(t *testing.T) {
	dataDir := t.TempDir()
	opts := collectorOptions{configs: append(append([]string{}, demoConfigs...), launcherOverlay(t), numberedLogOverlay(t)), dataDir: dataDir,
		enginePort: freePort(t), env: map[string]string{"MLXSIM_LOAD_DELAY": "0s"}}
	first := startFaultCollector(t, opts)
	waitEngineReady(first.stack)
	var url atomic.Value
	url.Store(first.proxyURL("/v1/chat/completions"))

	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	const lines = 20_000
	wrote := numberedLines(ctx, t, dataDir, lines, 2000) // 10 s of lines
	loadDone := make(chan *loadCounts, 1)
	go func() {
		loadDone <- runLoad(ctx, 2, 10_000, func(ctx context.Context, _ int) bool {
			rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
			defer rcancel()
			failed := completion(rctx, url.Load().(string), false, 8)
			if failed {
				time.Sleep(100 * time.Millisecond) // the collector is down: do not spin
			}
			return failed
		})
	}()

	time.Sleep(3 * time.Second)
	orphans := enginePids(first.stack)
	require.Len(t, orphans, 1)
	launchers := childrenOf(first.cmd.Process.Pid)
	require.NotEmpty(t, launchers, "the collector's launcher")
	require.NoError(t, first.cmd.Process.Kill())
	<-first.exited
	// The launcher gets the parent-death signal and is gone: whatever was
	// to end with the collector has had its signal by then. The engine
	// still answers after that (a process with a pending SIGKILL answers
	// nothing).
	require.Eventually(t, func() bool {
		for _, pid := range launchers {
			if pidAlive(pid) {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond, "the launcher outlived the killed collector")
	resp, err := http.Get(first.stack.engineURL("/health"))
	require.NoError(t, err, "the engine outlived the killed collector (only its launcher got the parent-death signal)")
	resp.Body.Close()
	left := enginePids(first.stack)
	assert.Equal(t, orphans, left, "the engine outlived the killed collector (only its launcher got the parent-death signal)")

	second := startFaultCollector(t, opts)
	waitEngineReady(second.stack)
	url.Store(second.proxyURL("/v1/chat/completions"))
	second.mark()
	assert.Contains(t, second.out.String(), "Ended a leftover engine from an earlier run of the collector")
	now := enginePids(second.stack)
	require.Len(t, now, 1, "one engine on the port")
	assert.NotEqual(t, orphans[0], now[0], "the leftover is gone; a new engine serves")
	assert.Equal(t, 0.0, supervisorValue(second, "mlx_server_crashes_total", "reason", "exit"), "the new engine did not crash-loop on a taken port")

	written := <-wrote
	require.Equal(t, lines, written)
	load := <-loadDone
	deadline := time.Now().Add(60 * time.Second)
	seen := numberedInJSONL(t, dataDir)
	for len(seen) < written && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		seen = numberedInJSONL(t, dataDir)
	}
	lost, dup := lostAndDuplicated(seen, upTo(written))
	t.Logf("requests sent %d, failed %d; lines written %d, lost %d, duplicated %d (lost: %s, twice: %s)", load.sent.Load(), load.failed.Load(),
		written, lost, dup, numberRanges(seen, written, func(c int) bool { return c == 0 }), numberRanges(seen, written, func(c int) bool { return c > 1 }))
	assert.Zero(t, lost, "no line lost")
	// file_log saves its checkpoint once a poll (1 s in the shipped
	// config), after the poll's lines are in the queue: a kill in that
	// window reads them again at restart, and a batch the file sink had
	// written but not yet marked done in its persistent queue is written
	// again too. A poll that comes late holds more than a second of lines.
	// So the bound is two polls' worth (2,000 lines/s here); the runs so far
	// saw none.
	assert.LessOrEqual(t, dup, 4000, "at most two polls' lines again")
	assert.False(t, completion(context.Background(), second.proxyURL("/v1/chat/completions"), true, 8), "the restarted collector serves")
	second.finish(t, faultRow{name: "collector kill -9 and restart mid-traffic", sent: load.sent.Load(), failed: load.failed.Load(), hasFailed: true,
		linesLost: lost, linesDuplicated: dup, hasLines: true,
		note: fmt.Sprintf("%d lines; failed: requests while no collector ran; leftover engine ended: %t", written, !pidAlive(orphans[0]))})
}

func pidAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !regexp.MustCompile(`\) Z `).Match(b)
}

// numberRanges lists the runs of line numbers below n whose count matches,
// as "a-b" ranges, for a failure message.
func numberRanges(seen map[int]int, n int, match func(int) bool) string {
	var out []string
	for i := 0; i < n; i++ {
		if !match(seen[i]) {
			continue
		}
		j := i
		for j+1 < n && match(seen[j+1]) {
			j++
		}
		out = append(out, fmt.Sprintf("%d-%d", i, j))
		i = j
	}
	return strings.Join(out, ",")
}
