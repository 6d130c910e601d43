package mlxsim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The original's judge prompt, filled in (cluster/opik_evaluator.py).
const judgePrompt = "You are an evaluator. Score the assistant's answer to the user's question using three numbers between 0 and 1.\n\n" +
	"Question: What is a cache?\n\nAssistant answer: A cache keeps values close.\n\n" +
	"Return ONLY a JSON object with exactly these keys:\n" +
	"- \"correctness\": how factually correct and complete the answer is\n" +
	"- \"helpfulness\": how well the answer addresses the request\n" +
	"- \"hallucination_free\": 1.0 if the answer is fully grounded in the question and invents nothing, 0.0 if it fabricates\n" +
	"Example: {\"correctness\": 0.9, \"helpfulness\": 0.8, \"hallucination_free\": 1.0}"

func judgeAsk(t *testing.T, o Options, prompt string) string {
	t.Helper()
	ts := newTestServer(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := openaiClient(ts)
	resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model:       "mlx-community/Qwen3-4B-4bit",
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
		Temperature: openai.Float(0),
	})
	if err != nil {
		t.Fatal(err)
	}
	return resp.Choices[0].Message.Content
}

func TestJudgeAnswersWithScores(t *testing.T) {
	got := judgeAsk(t, Options{Model: "mlx-community/Qwen3-4B-4bit"}, judgePrompt)
	var scores map[string]float64
	if err := json.Unmarshal([]byte(got), &scores); err != nil {
		t.Fatalf("judge reply %q is not a JSON object: %v", got, err)
	}
	if len(scores) != 3 {
		t.Fatalf("scores %v, want the prompt's three", scores)
	}
	for _, k := range defaultJudgeKeys {
		if v, ok := scores[k]; !ok || v != JudgeScore(judgePrompt, k) || v < 0.5 || v > 1 {
			t.Errorf("%s = %v (present %v), want JudgeScore %v", k, v, ok, JudgeScore(judgePrompt, k))
		}
	}
	if again := judgeAsk(t, Options{Model: "mlx-community/Qwen3-4B-4bit"}, judgePrompt); again != got {
		t.Errorf("not deterministic: %q then %q", got, again)
	}
}

func TestJudgeOwnScoreNames(t *testing.T) {
	prompt := "Rate it.\nReturn ONLY a JSON object with these keys:\n- \"clarity\": how clear\n- \"tone\": how polite\n"
	var scores map[string]float64
	if err := json.Unmarshal([]byte(judgeAsk(t, Options{}, prompt)), &scores); err != nil {
		t.Fatal(err)
	}
	if len(scores) != 2 || scores["clarity"] != JudgeScore(prompt, "clarity") || scores["tone"] != JudgeScore(prompt, "tone") {
		t.Errorf("scores %v", scores)
	}
}

func TestJudgeNoise(t *testing.T) {
	got := judgeAsk(t, Options{JudgeNoise: true}, judgePrompt)
	if strings.ContainsAny(got, "{}") || got == "" {
		t.Errorf("noisy judge answered %q, want prose without JSON", got)
	}
}

func TestOrdinaryPromptIsNotJudged(t *testing.T) {
	if got := judgeAsk(t, Options{}, "What is a cache?"); strings.Contains(got, "{") {
		t.Errorf("an ordinary question got %q", got)
	}
}

// A request with a seed has the generation thread alone: a request that
// comes while it runs waits for it (what makes the supervisor's completion
// probe wait on a busy engine), and is served once it ends. Without a seed
// they share the thread: the newcomer is answered while the other still
// runs. The engine decodes 2 tokens a second, so an answer (16 tokens or
// more) takes seconds; the test ends it by leaving.
func TestSeededRequestsRunAlone(t *testing.T) {
	ts := newTestServer(t, Options{DecodeTPS: 2})
	long := `{"messages": [{"role": "user", "content": "tell a long story"}], "max_tokens": 80, "seed": 7, "stream": true}`
	ping := `{"messages": [{"role": "user", "content": "ping"}], "max_tokens": 1}`
	running := runningStream(t, ts, long)
	answered := make(chan rawResp, 1)
	go func() { answered <- ts.chat(t, ping) }()
	waitFor(t, "the request behind the seeded one to wait for the generation thread", func() bool { return ts.e.queued.Load() > 0 })
	require.NoError(t, running.Close()) // the seeded generation ends
	select {
	case r := <-answered:
		assert.Equal(t, 200, r.status, r.raw)
	case <-time.After(10 * time.Second):
		t.Fatal("the request behind the seeded one was not served once it ended")
	}
	waitFor(t, "the seeded generation to end", func() bool { return ts.e.queued.Load() == 0 && ts.e.batched.Load() == 0 })

	// Without a seed they share it.
	running = runningStream(t, ts, strings.Replace(long, `, "seed": 7`, "", 1))
	defer running.Close()
	assert.Equal(t, 200, ts.chat(t, ping).status)
	assert.Equal(t, int64(1), ts.e.batched.Load(), "answered while the other generation still runs")
}
