package bench

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
)

// startSim runs the simulated engine on loopback until the test ends.
func startSim(t testing.TB, o mlxsim.Options) (*mlxsim.Engine, string) {
	t.Helper()
	e := mlxsim.New(o, io.Discard)
	srv := httptest.NewServer(e.Handler())
	// The engine first: it releases hung requests before the server
	// waits for them.
	t.Cleanup(srv.Close)
	t.Cleanup(e.Close)
	return e, srv.URL + "/v1"
}

func simTarget(t testing.TB, url string, timeout time.Duration) *Target {
	tg := NewTarget(TargetConfig{BaseURL: url, Trace: true, Timeout: timeout, Usage: true})
	t.Cleanup(tg.Close)
	return tg
}

func userCall(text string, stream bool, maxTokens int) Call {
	return Call{Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}, Stream: stream, MaxTokens: maxTokens}
}

// The prompt sizes grow, and a request's nonce never changes its token
// count (the simulated engine splits digits one by one, as Qwen's
// tokenizer does), so every request of a run has the same prefill.
func TestPromptTokenCounts(t *testing.T) {
	_, url := startSim(t, mlxsim.Options{PrefillTPS: 1e6, DecodeTPS: 1e5})
	tg := simTarget(t, url, 10*time.Second)
	last := 0
	for _, name := range PromptNames() {
		p, _ := Prompt(name)
		counts := map[int]bool{}
		for _, n := range []int{0, 7, 12_345_678, 3_000_001} {
			r := tg.Do(context.Background(), userCall(Nonce(RunID(), n)+p, true, 8), time.Now())
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			counts[r.Usage.PromptTokens] = true
			if r.Usage.PromptTokens <= last {
				t.Errorf("%s: %d prompt tokens, not more than the smaller prompt's %d", name, r.Usage.PromptTokens, last)
			}
		}
		if len(counts) != 1 {
			t.Errorf("%s: prompt token counts %v vary with the nonce", name, counts)
		}
		for c := range counts {
			last = c
			t.Logf("%s: %d prompt tokens", name, c)
		}
	}
}
