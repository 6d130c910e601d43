package mlxsim

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	reRecord = regexp.MustCompile(`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3} - (DEBUG|INFO|WARNING|ERROR|CRITICAL) - `)
	reAccess = regexp.MustCompile(`^127\.0\.0\.1 - - \[\d{2}/(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)/\d{4} \d{2}:\d{2}:\d{2}\] "(GET|POST|OPTIONS) [^ ]+ HTTP/1\.1" \d{3} -$`)
	reBlock  = []*regexp.Regexp{
		regexp.MustCompile(` - INFO - Prompt Cache: (\d+) sequences, (\d+\.\d{2}) GB$`),
		regexp.MustCompile(` - INFO - - assistant: (\d+) sequences, (\d+\.\d{2}) GB$`),
		regexp.MustCompile(` - INFO - - user: (\d+) sequences, (\d+\.\d{2}) GB$`),
		regexp.MustCompile(` - INFO - - system: (\d+) sequences, (\d+\.\d{2}) GB$`),
	}
)

type cacheBlock struct {
	seqs [4]int
	gb   [4]float64
}

// cacheBlocks finds every 4-line "Prompt Cache:" block and checks that the
// four lines are together and in order.
func cacheBlocks(t *testing.T, lines []string) []cacheBlock {
	t.Helper()
	var out []cacheBlock
	for i, l := range lines {
		if !strings.Contains(l, " - INFO - Prompt Cache: ") {
			continue
		}
		if i+3 >= len(lines) {
			t.Fatalf("truncated block at line %d", i)
		}
		var b cacheBlock
		for k := 0; k < 4; k++ {
			m := reBlock[k].FindStringSubmatch(lines[i+k])
			if m == nil || !reRecord.MatchString(lines[i+k]) {
				t.Fatalf("block line %d: %q", k, lines[i+k])
			}
			b.seqs[k], _ = strconv.Atoi(m[1])
			b.gb[k], _ = strconv.ParseFloat(m[2], 64)
		}
		out = append(out, b)
	}
	return out
}

func TestPromptCacheBlockGrowsWithRequests(t *testing.T) {
	ts := newTestServer(t, Options{})
	sys := strings.Repeat("You are a careful assistant. ", 40)
	for i := 0; i < 4; i++ {
		body := fmt.Sprintf(`{"messages": [{"role": "system", "content": %q}, {"role": "user", "content": "Question number %d about caching?"}]}`, sys, i)
		if r := ts.chat(t, body); r.status != 200 {
			t.Fatalf("request %d: %q", i, r.raw)
		}
	}
	blocks := cacheBlocks(t, ts.log.Lines())
	if len(blocks) != 4 {
		t.Fatalf("%d blocks for 4 requests", len(blocks))
	}
	// Each finished request left its user segment, its prompt minus the
	// last token (typed assistant after the empty think block: reference
	// D9a) and its final assistant entry; the shared system prompt is one
	// entry.
	want := [][4]int{{0, 0, 0, 0}, {4, 2, 1, 1}, {7, 4, 2, 1}, {10, 6, 3, 1}}
	for i, b := range blocks {
		if b.seqs != want[i] {
			t.Errorf("block %d: sequences %v, want %v", i, b.seqs, want[i])
		}
		if i > 0 && !(b.gb[0] > blocks[i-1].gb[0]) {
			t.Errorf("block %d: %.2f GB did not grow from %.2f", i, b.gb[0], blocks[i-1].gb[0])
		}
	}
	// GB are 1e9 bytes: the system segment alone is ~250 tokens × 147456 B.
	if g := blocks[3].gb[3]; g < 0.03 || g > 0.05 {
		t.Errorf("system entry %.2f GB", g)
	}
	if !strings.Contains(ts.log.String(), "- system: 0 sequences, 0.00 GB") {
		t.Errorf("an empty type still prints (plural, 0.00 GB)")
	}
	if strings.Contains(ts.log.String(), " sequence,") {
		t.Errorf("singular form printed")
	}
	// Later requests reuse the system prompt.
	d := mustDict(t, ts.chat(t, fmt.Sprintf(`{"messages": [{"role": "system", "content": %q}, {"role": "user", "content": "Another one?"}]}`, sys)).body)
	if c := num(path(d, "usage", "prompt_tokens_details", "cached_tokens")); c < 240 {
		t.Errorf("system prompt not reused: cached_tokens %d", c)
	}
}

func TestPromptCacheEvictionAndLimits(t *testing.T) {
	ts := newTestServer(t, Options{PromptCacheSize: 3})
	for i := 0; i < 6; i++ {
		ts.chat(t, fmt.Sprintf(`{"messages": [{"role": "user", "content": "Request %d"}], "max_tokens": 4}`, i))
	}
	for i, b := range cacheBlocks(t, ts.log.Lines()) {
		if b.seqs[0] > 3 || b.seqs[0] != b.seqs[1]+b.seqs[2]+b.seqs[3] {
			t.Errorf("block %d: %v with --prompt-cache-size 3", i, b.seqs)
		}
	}
	tb := newTestServer(t, Options{PromptCacheBytes: 20_000_000})
	for i := 0; i < 6; i++ {
		tb.chat(t, fmt.Sprintf(`{"messages": [{"role": "user", "content": "Request %d %s"}], "max_tokens": 4}`, i, strings.Repeat("x ", 30)))
	}
	// --prompt-cache-bytes is enforced at admission only, after the block
	// is printed: inserts never evict by bytes (mlx_lm v0.31.3 server.py,
	// run builds LRUPromptCache without max_bytes), so a block
	// shows up to one request's entries (its user segment, its prompt minus
	// the last token and its final entry, about 40 tokens each: 18 MB) over
	// the limit, and the next admission trims it back.
	over := false
	for i, b := range cacheBlocks(t, tb.log.Lines()) {
		over = over || b.gb[0] > 0.02
		if b.gb[0] > 0.02+0.025 { // the block prints GB to 2 places
			t.Errorf("block %d: %.2f GB, more than one request's entries over --prompt-cache-bytes 20MB", i, b.gb[0])
		}
	}
	if !over {
		t.Errorf("the cache never went over --prompt-cache-bytes between admissions, as mlx_lm's does")
	}
}

func TestPromptCacheTagsInFlightAndTrimmable(t *testing.T) {
	// Trimmable (Qwen3 KVCache): the user entry swallows the system entry,
	// and the final assistant entry swallows the user entry.
	ts := newTestServer(t, Options{TrimmableCache: true, DecodeTPS: 100})
	done := make(chan struct{})
	go func() {
		defer close(done)
		ts.chat(t, `{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}], "max_tokens": 30}`)
	}()
	waitFor(t, "the first request to decode", func() bool {
		return strings.Count(ts.log.String(), "Prompt processing progress") >= 3
	})
	ts.chat(t, `{"messages": [{"role": "user", "content": "Other"}], "max_tokens": 1}`)
	<-done
	ts.chat(t, `{"messages": [{"role": "user", "content": "Third"}], "max_tokens": 1}`)
	blocks := cacheBlocks(t, ts.log.Lines())
	if len(blocks) != 3 {
		t.Fatalf("%d blocks", len(blocks))
	}
	if blocks[1].seqs != [4]int{1, 1, 0, 0} {
		t.Errorf("while the first request decodes: %v, want its prompt minus the last token only (typed assistant, it swallowed the user segment)", blocks[1].seqs)
	}
	if blocks[2].seqs != [4]int{2, 2, 0, 0} {
		t.Errorf("after both: %v, want only the 2 assistant entries", blocks[2].seqs)
	}
}

func TestPromptCacheUnit(t *testing.T) {
	c := newPromptCache(4, 0, 10, false)
	c.insert([]int{1, 2, 3}, "system")
	c.insert([]int{1, 2, 3, 4, 5}, "user")
	c.insert([]int{1, 2, 3, 4, 5, 6, 7}, "assistant")
	if got := c.fetch([]int{1, 2, 3, 4, 5, 9}); got != 5 {
		t.Errorf("shorter match: %d", got)
	}
	if got := c.fetch([]int{1, 2, 3, 4, 5, 6, 7}); got != 7 {
		t.Errorf("exact match: %d", got)
	}
	if got := c.fetch([]int{1, 2, 3, 4, 5, 6}); got != 5 {
		t.Errorf("non-trimmable cannot use the longer entry: %d", got)
	}
	if got := c.fetch([]int{9}); got != 0 {
		t.Errorf("miss: %d", got)
	}
	// CacheOrder.pop: assistant while it has at least as many as user.
	c.insert([]int{8}, "user")      // 4 entries: a1 u2 s1
	c.insert([]int{9}, "assistant") // 5 > 4: a2 >= u2 → pop oldest assistant
	if lines := c.statsLines(); lines[1] != "- assistant: 1 sequences, 0.00 GB" || lines[2] != "- user: 2 sequences, 0.00 GB" {
		t.Errorf("after eviction: %q", lines)
	}
	c.insert([]int{7}, "system") // a1 < u2 → user (2 >= s2) → pop oldest user
	if lines := c.statsLines(); lines[2] != "- user: 1 sequences, 0.00 GB" || lines[3] != "- system: 2 sequences, 0.00 GB" {
		t.Errorf("after second eviction: %q", lines)
	}

	tc := newPromptCache(10, 0, 10, true)
	tc.insert([]int{1, 2, 3}, "system")
	tc.insert([]int{1, 2, 3, 4, 5}, "user")
	if tc.len() != 1 {
		t.Errorf("trimmable: the prefix entry should be gone, %d entries", tc.len())
	}
	if got := tc.fetch([]int{1, 2, 3, 4, 9}); got != 4 {
		t.Errorf("trimmable longer match: %d", got)
	}
	if got := tc.fetch([]int{1, 2, 3, 4, 5}); got != 5 {
		t.Errorf("trimmable exact: %d", got)
	}
}

func TestAccessAndRecordLines(t *testing.T) {
	ts := newTestServer(t, Options{})
	ts.get(t, "/health")
	ts.chat(t, `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}`)
	lines := ts.log.Lines()
	if len(lines) != 1+4+1+3 {
		t.Fatalf("log:\n%s", ts.log.String())
	}
	if !reAccess.MatchString(lines[0]) || !strings.HasSuffix(lines[0], `] "GET /health HTTP/1.1" 200 -`) {
		t.Errorf("access line %q", lines[0])
	}
	// Cache block, then the access line (when headers start), then progress.
	if !strings.Contains(lines[1], "Prompt Cache:") || !reAccess.MatchString(lines[5]) || !strings.HasSuffix(lines[5], `"POST /v1/chat/completions HTTP/1.1" 200 -`) {
		t.Errorf("order:\n%s", ts.log.String())
	}
	for _, l := range lines[6:] {
		if !reRecord.MatchString(l) || !strings.Contains(l, " - INFO - Prompt processing progress: ") {
			t.Errorf("progress line %q", l)
		}
	}
	// The access line for a non-streamed completion is written before the
	// response: it is there even when the client never reads the answer.
	ts2 := newTestServer(t, Options{DecodeTPS: 20})
	go ts2.chat(t, `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 40}`)
	waitFor(t, "the access line", func() bool { return strings.Contains(ts2.log.String(), `"POST /v1/chat/completions HTTP/1.1" 200 -`) })
}

func TestStartupLines(t *testing.T) {
	log := &syncBuffer{}
	e := New(Options{Host: "0.0.0.0", Port: 8081}, log)
	defer e.Close()
	e.LogStartup()
	lines := log.Lines()
	if len(lines) != 3 {
		t.Fatalf("startup:\n%s", log.String())
	}
	if !regexp.MustCompile(`^/\S+/mlx_lm/server\.py:1692: UserWarning: mlx_lm\.server is not recommended for production as it only implements basic security checks\.$`).MatchString(lines[0]) || lines[1] != "  warnings.warn(" {
		t.Errorf("warning lines %q", lines[:2])
	}
	if !reRecord.MatchString(lines[2]) || !strings.HasSuffix(lines[2], " - INFO - Starting httpd at 0.0.0.0 on port 8081...") {
		t.Errorf("start line %q", lines[2])
	}
	// --log-level WARNING hides INFO records but not the warning.
	log = &syncBuffer{}
	e = New(Options{LogLevel: "WARNING"}, log)
	defer e.Close()
	e.LogStartup()
	if strings.Contains(log.String(), "Starting httpd") || !strings.Contains(log.String(), "UserWarning") {
		t.Errorf("WARNING level:\n%s", log.String())
	}
}

func TestDebugLogLevel(t *testing.T) {
	ts := newTestServer(t, Options{LogLevel: "DEBUG"})
	ts.chat(t, `{"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}`)
	log := ts.log.String()
	for _, want := range []string{" - DEBUG - Incoming Request Body: {\n\t\"messages\": [\n\t\t{\n\t\t\t\"role\": \"user\",", " - DEBUG - Starting completion:\n", " - DEBUG - Outgoing Response: {\n\t\"id\": \"chatcmpl-"} {
		if !strings.Contains(log, want) {
			t.Errorf("missing %q in:\n%s", want, log)
		}
	}
}

func TestLogLinesNeverInterleave(t *testing.T) {
	ts := newTestServer(t, Options{DecodeTPS: 2000, PrefillStepSize: 8})
	var wg sync.WaitGroup
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			stream := i%2 == 0
			ts.chat(t, fmt.Sprintf(`{"messages": [{"role": "user", "content": "Concurrent %d %s"}], "stream": %v, "max_tokens": 20}`, i, strings.Repeat("w ", 20), stream))
		}(i)
	}
	wg.Wait()
	lines := ts.log.Lines()
	for _, l := range lines {
		if !reRecord.MatchString(l) && !reAccess.MatchString(l) {
			t.Fatalf("mangled line %q", l)
		}
	}
	if blocks := cacheBlocks(t, lines); len(blocks) != 12 {
		t.Errorf("%d blocks", len(blocks))
	}
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "Prompt processing progress: 8/") }) {
		t.Errorf("no chunked progress")
	}
}
