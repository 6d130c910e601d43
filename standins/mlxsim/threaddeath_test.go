package mlxsim

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// noAnswer posts body and says whether the engine sent nothing at all
// (not even headers) by the time the request waits for ever on the dead
// thread: the engine's count of such requests moves (a positive event,
// not a silence), then whatever it had sent is already in the socket.
func noAnswer(t *testing.T, ts *testServer, body string) bool {
	t.Helper()
	return noAnswerAt(t, ts, "/v1/chat/completions", body)
}

func noAnswerAt(t *testing.T, ts *testServer, path, body string) bool {
	t.Helper()
	stuck := ts.e.stuck.Load()
	conn, err := net.Dial("tcp", ts.addr())
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, postReq(path, body))
	require.NoError(t, err)
	waitFor(t, "the request to wait on the generation thread", func() bool { return ts.e.stuck.Load() > stuck })
	_ = conn.SetReadDeadline(time.Now())
	b := make([]byte, 1)
	n, err := conn.Read(b)
	return n == 0 && err != nil && strings.Contains(err.Error(), "timeout")
}

// MLX 0.32 (the default pair): a Metal fault kills the generation thread;
// /health stays 200, nothing exits, every completion waits unanswered.
func TestMetalFaultKillsTheGenerationThreadUnderMLX032(t *testing.T) {
	aborted := false
	ts := newTestServer(t, Options{MetalFaultAfter: 2, Abort: func() { aborted = true }, Exit: func(int) { t.Error("exit") }})
	for range 2 {
		r := ts.chat(t, userHi)
		require.Equal(t, 200, r.status)
	}
	require.Eventually(t, ts.e.ThreadDead, 2*time.Second, 10*time.Millisecond)
	assert.False(t, aborted, "MLX 0.32 does not abort")
	log := ts.log.String()
	assert.Contains(t, log, "Exception in thread Thread-1 (_generate):\nTraceback (most recent call last):\n")
	assert.Contains(t, log, MetalThreadDeathLine+"\n")
	assert.NotContains(t, log, "libc++abi")
	assert.Equal(t, 200, ts.get(t, "/health").status)
	before := len(ts.log.String())
	assert.True(t, noAnswer(t, ts, userHi), "a completion is answered by a dead thread")
	assert.Equal(t, before, len(ts.log.String()), "a request on a dead thread is never admitted: no line")
	assert.Equal(t, 200, ts.get(t, "/health").status)
}

// Before MLX 0.32 the same fault aborts the process.
func TestMetalFaultAbortsBeforeMLX032(t *testing.T) {
	for _, v := range []string{"0.31", "0.30"} {
		var mu sync.Mutex
		aborted := false
		ts := newTestServer(t, Options{MLXVersion: v, MetalFaultAfter: 1, Abort: func() { mu.Lock(); aborted = true; mu.Unlock() }})
		require.Equal(t, 200, ts.chat(t, userHi).status)
		require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return aborted }, 2*time.Second, 10*time.Millisecond, v)
		assert.Contains(t, ts.log.String(), MetalFaultLine, v)
		assert.False(t, ts.e.ThreadDead(), v)
	}
}

// mlx-lm 0.31: a failed load kills the generation thread; the HTTP server
// answers /health, completions wait, nothing exits. mlx-lm 0.30 (MLX 0.30):
// the main thread's traceback, then exit 1.
func TestLoadFailure(t *testing.T) {
	ts := newTestServer(t, Options{LoadFail: true, LoadDelay: 20 * time.Millisecond, Exit: func(int) { t.Error("exit") }})
	require.Eventually(t, ts.e.ThreadDead, 2*time.Second, 10*time.Millisecond)
	log := ts.log.String()
	assert.Contains(t, log, "Exception in thread Thread-1 (_generate):")
	assert.Contains(t, log, "load_default")
	assert.Contains(t, log, "RepositoryNotFoundError")
	assert.Equal(t, 200, ts.get(t, "/health").status)
	assert.True(t, noAnswer(t, ts, userHi))

	exited := make(chan int, 1)
	old := newTestServer(t, Options{MLXVersion: "0.30", LoadFail: true, Exit: func(c int) { exited <- c }})
	select {
	case c := <-exited:
		assert.Equal(t, 1, c)
	case <-time.After(2 * time.Second):
		t.Fatal("mlx-lm 0.30 did not exit on a failed load")
	}
	assert.Contains(t, old.log.String(), "Traceback (most recent call last):\n  File \""+scriptPath)
	assert.NotContains(t, old.log.String(), "Exception in thread")
}

// A stop value the batched path cannot use kills the thread (mlx_lm
// v0.31.3 server.py, _generate calls _make_state_machine outside its try).
func TestBadStopKillsTheGenerationThread(t *testing.T) {
	for _, stop := range []string{`[1]`, `[["a"]]`, `5`} {
		ts := newTestServer(t, Options{})
		assert.True(t, noAnswer(t, ts, `{"messages": [{"role": "user", "content": "hi"}], "stop": `+stop+`}`), stop)
		assert.True(t, ts.e.ThreadDead(), stop)
		assert.Contains(t, ts.log.String(), "in _make_state_machine\n", stop)
		assert.True(t, noAnswer(t, ts, userHi), "a later request is answered")
		assert.Equal(t, 200, ts.get(t, "/health").status)
	}
}

// The fingerprint names the pair.
func TestFingerprintFollowsTheVersionPair(t *testing.T) {
	assert.Equal(t, "0.31.3-0.32.1-macOS-15.6.1-arm64-arm-64bit-applegpu_g15s", DefaultSystemFingerprint)
	assert.Equal(t, "0.31.3-0.31.2-macOS-15.6.1-arm64-arm-64bit-applegpu_g15s", Fingerprint("0.31"))
	assert.Equal(t, "0.30.7-0.30.6-macOS-15.6.1-arm64-arm-64bit-applegpu_g15s", Fingerprint("0.30"))
	assert.Error(t, CheckMLXVersion("0.29"))
}

// A request naming another model description drains the running batch:
// it waits for the running generation, and so does everyone after it. A
// request of the same description joins the batch and is answered while
// the other runs. The engine decodes 2 tokens a second, so the running
// answer (16 tokens or more) lasts seconds; the test ends it by leaving.
func TestDifferentModelDescriptionDrainsTheBatch(t *testing.T) {
	ts := newTestServer(t, Options{DecodeTPS: 2})
	running := runningStream(t, ts, `{"model": "default_model", "max_tokens": 40, "stream": true, "messages": [{"role": "user", "content": "tell me about owls"}]}`)
	assert.Equal(t, 200, ts.chat(t, `{"model": "default_model", "max_tokens": 1, "messages": [{"role": "user", "content": "ping"}]}`).status)
	assert.Equal(t, int64(1), ts.e.batched.Load(), "the same description joins the batch: answered while the other runs")
	assert.Zero(t, ts.e.Drains())

	answered := make(chan rawResp, 1)
	go func() {
		answered <- ts.chat(t, `{"model": "`+DefaultModel+`", "max_tokens": 1, "messages": [{"role": "user", "content": "ping"}]}`)
	}()
	waitFor(t, "the other description to wait for the batch", func() bool { return ts.e.queued.Load() > 0 })
	require.NoError(t, running.Close()) // the batch's generation ends
	select {
	case r := <-answered:
		assert.Equal(t, 200, r.status, r.raw)
	case <-time.After(10 * time.Second):
		t.Fatal("the other description was not served once the batch ended")
	}
	assert.Equal(t, int64(1), ts.e.Drains())
}

// A first run's download bar: tqdm's draws, each after a \r, one \n at the
// end; and ranks under mlx.launch: a block per rank, CRLF line ends.
func TestDownloadBarsAndRanks(t *testing.T) {
	ts := newTestServer(t, Options{DownloadBars: true, LoadDelay: 110 * time.Millisecond})
	require.Equal(t, 200, ts.chat(t, userHi).status)
	log := ts.log.String()
	assert.True(t, strings.HasPrefix(log, "\rFetching 11 files:   0%|          | 0/11 [00:00<?, ?it/s]\rFetching 11 files:   9%|"), log)
	assert.Contains(t, log, "| 11/11 [")
	assert.Equal(t, 12, strings.Count(log, "\rFetching 11 files:"))

	ts = newTestServer(t, Options{Ranks: 2})
	require.Equal(t, 200, ts.chat(t, userHi).status)
	log = ts.log.String()
	assert.Equal(t, 2, strings.Count(log, " - INFO - Prompt Cache: 0 sequences, 0.00 GB\r\n"), log)
	assert.NotContains(t, strings.ReplaceAll(log, "\r\n", ""), "\n")
}

// A text completion whose prompt is an earlier one minus its last token
// is an exact cache hit, and the batched path's generation thread dies on
// it (exactHitThreadDeath in faults.go); with a seed (_serve_single) it
// is served.
func TestExactHitOfATextPromptKillsTheGenerationThread(t *testing.T) {
	ts := newTestServer(t, Options{})
	r := ts.post(t, "/v1/completions", `{"prompt": "The owls of the northern forest hunt at night", "max_tokens": 2}`)
	require.Equal(t, 200, r.status)
	require.False(t, ts.e.ThreadDead())
	// The same prompt minus its last token: "night" is one token here.
	assert.True(t, noAnswerAt(t, ts, "/v1/completions", `{"prompt": "The owls of the northern forest hunt at", "max_tokens": 2}`))
	assert.True(t, ts.e.ThreadDead())
	assert.Contains(t, ts.log.String(), "Exception in thread Thread-1 (_generate):\n")
	assert.Contains(t, ts.log.String(), "IndexError: list index out of range\n")
}
