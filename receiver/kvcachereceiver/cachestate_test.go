package kvcachereceiver

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var readAt = time.Date(2026, 8, 22, 18, 0, 0, 0, time.UTC)

func feed(a *assembler, lines ...string) {
	for _, l := range lines {
		a.HandleLine([]byte(l), readAt)
	}
}

// block is the engine's 4-line record, as mlx_lm >= 0.31.2 prints it.
func block(ts string, a, u, s usage) []string {
	gb := func(b int64) string { return formatGB(b) }
	total := usage{a.Sequences + u.Sequences + s.Sequences, a.Bytes + u.Bytes + s.Bytes}
	return []string{
		ts + " - INFO - Prompt Cache: " + itoa(total.Sequences) + " sequences, " + gb(total.Bytes) + " GB",
		ts + " - INFO - - assistant: " + itoa(a.Sequences) + " sequences, " + gb(a.Bytes) + " GB",
		ts + " - INFO - - user: " + itoa(u.Sequences) + " sequences, " + gb(u.Bytes) + " GB",
		ts + " - INFO - - system: " + itoa(s.Sequences) + " sequences, " + gb(s.Bytes) + " GB",
	}
}

func TestTheRealLogGivesItsLastBlock(t *testing.T) {
	var a assembler
	readFile(t, &a, "testdata/server.log")
	st, ok := a.Latest()
	require.True(t, ok)
	assert.Equal(t, cacheState{
		Format: formatPromptCache,
		Total:  usage{4, 30_000_000},
		ByType: [numCacheTypes]usage{{3, 20_000_000}, {1, 10_000_000}, {0, 0}},
		SeenAt: localTime("2026-08-22 17:01:15,007"),
	}, st)
}

func TestTheOlderOneLineFormat(t *testing.T) {
	var a assembler
	readFile(t, &a, "testdata/server-0.31.1.log")
	st, ok := a.Latest()
	require.True(t, ok)
	assert.Equal(t, cacheState{
		Format: formatKVCaches,
		Total:  usage{2, 1_270_000_000},
		SeenAt: localTime("2026-05-02 09:13:30,410"),
	}, st)
}

func TestOnlyACompleteBlockIsPublished(t *testing.T) {
	var a assembler
	b := block("2026-08-22 17:01:15,007", usage{3, 20_000_000}, usage{1, 10_000_000}, usage{})
	feed(&a, b[:3]...)
	_, ok := a.Latest()
	assert.False(t, ok, "three lines of four are not a state")
	assert.False(t, a.Settled())
	feed(&a, b[3])
	st, ok := a.Latest()
	require.True(t, ok)
	assert.Equal(t, int64(4), st.Total.Sequences)
	assert.True(t, a.Settled())

	// A newer block that is still being written leaves the older one.
	b2 := block("2026-08-22 17:02:00,000", usage{5, 50_000_000}, usage{}, usage{})
	feed(&a, b2[:2]...)
	st, _ = a.Latest()
	assert.Equal(t, int64(4), st.Total.Sequences)
	feed(&a, b2[2:]...)
	st, _ = a.Latest()
	assert.Equal(t, int64(5), st.Total.Sequences)
}

func TestAccessLinesMayComeBetweenABlocksLines(t *testing.T) {
	var a assembler
	b := block("2026-08-22 17:01:15,007", usage{3, 20_000_000}, usage{1, 10_000_000}, usage{})
	access := `127.0.0.1 - - [22/Aug/2026 17:01:15] "POST /v1/chat/completions HTTP/1.1" 200 -`
	feed(&a, b[0], access, b[1], access, access, b[2], "\xff\xfe garbage", b[3])
	st, ok := a.Latest()
	require.True(t, ok)
	assert.Equal(t, usage{1, 10_000_000}, st.ByType[typeUser])
}

func TestLinesTooFarApartAreNotOneBlock(t *testing.T) {
	var a assembler
	b := block("2026-08-22 17:01:15,007", usage{3, 20_000_000}, usage{1, 10_000_000}, usage{})
	feed(&a, b[:2]...)
	for range maxInterleavedLines + 1 {
		feed(&a, "2026-08-22 17:01:15,100 - INFO - Prompt processing progress: 1/2")
	}
	feed(&a, b[2:]...)
	_, ok := a.Latest()
	assert.False(t, ok)
}

func TestTypeLinesWithoutTheirHeaderAreIgnored(t *testing.T) {
	var a assembler
	b := block("2026-08-22 17:01:15,007", usage{3, 20_000_000}, usage{1, 10_000_000}, usage{})
	feed(&a, b[1:]...) // a read that began after the header
	_, ok := a.Latest()
	assert.False(t, ok)
	assert.False(t, a.Settled())
}

func TestARepeatedTypeBreaksTheBlock(t *testing.T) {
	var a assembler
	b := block("2026-08-22 17:01:15,007", usage{3, 20_000_000}, usage{1, 10_000_000}, usage{})
	feed(&a, b[0], b[1], b[1], b[2], b[3])
	_, ok := a.Latest()
	assert.False(t, ok)
}

func TestAnUnknownTypeDoesNotBreakTheBlock(t *testing.T) {
	var a assembler
	b := block("2026-08-22 17:01:15,007", usage{3, 20_000_000}, usage{1, 10_000_000}, usage{})
	feed(&a, b[0], b[1], "2026-08-22 17:01:15,007 - INFO - - tool: 1 sequences, 0.01 GB", b[2], b[3])
	_, ok := a.Latest()
	assert.True(t, ok)
}

func TestAnEngineRestartForgetsTheOldProcesssCache(t *testing.T) {
	var a assembler
	feed(&a, block("2026-08-22 17:01:15,007", usage{3, 20_000_000}, usage{}, usage{})...)
	feed(&a, "2026-08-22 17:05:00,000 - INFO - Starting httpd at 127.0.0.1 on port 8081...")
	_, ok := a.Latest()
	assert.False(t, ok, "the new process's cache is not the old one's")
	assert.True(t, a.Settled(), "and reading further back cannot tell more")
	feed(&a, block("2026-08-22 17:05:09,000", usage{}, usage{}, usage{})...)
	st, ok := a.Latest()
	require.True(t, ok)
	assert.Equal(t, usage{}, st.Total)
}

func TestALineWithoutTimestampIsDatedWhenRead(t *testing.T) {
	var a assembler
	feed(&a, "x - INFO - KV Caches: 1 seq, 0.50 GB, latest user cache 10 tokens")
	st, ok := a.Latest()
	require.True(t, ok)
	assert.Equal(t, readAt, st.SeenAt)
}

// FuzzAssembler: any bytes, cut into lines anywhere, leave a state that is
// absent or made of values some line really printed.
func FuzzAssembler(f *testing.F) {
	b, err := os.ReadFile("testdata/server.log")
	require.NoError(f, err)
	f.Add(b)
	f.Add([]byte(strings.Join(block("2026-08-22 17:01:15,007", usage{1, 0}, usage{2, 10_000_000}, usage{}), "\n")))
	f.Fuzz(func(t *testing.T, log []byte) {
		var a assembler
		for _, line := range bytes.Split(log, []byte("\n")) {
			a.HandleLine(line, readAt)
		}
		st, ok := a.Latest()
		if !ok {
			return
		}
		if st.Format != formatPromptCache && st.Format != formatKVCaches {
			t.Fatalf("state without a format: %+v", st)
		}
		if st.Total.Sequences < 0 || st.Total.Bytes < 0 {
			t.Fatalf("negative state: %+v", st)
		}
	})
}

func readFile(t *testing.T, a *assembler, path string) {
	t.Helper()
	file, err := os.Open(path)
	require.NoError(t, err)
	defer file.Close()
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		a.HandleLine(sc.Bytes(), readAt)
	}
	require.NoError(t, sc.Err())
}
