package mlxsim

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
)

// The simulated model as a judge, for the judge loop (receiver/judgereceiver):
//
//   - A chat whose last message contains JudgeMarker is a judge prompt. It
//     is answered with one JSON object, on one line, of the keys the prompt
//     lists as `- "key":` lines (the original's prompt lists correctness,
//     helpfulness and hallucination_free; a prompt that lists none gets
//     those three), in the prompt's order.
//   - Each value is JudgeScore(prompt, key): 0.50 to 1.00 in steps of 0.01,
//     a function of the whole prompt, so the same question and answer get
//     the same scores and a test can compute them.
//   - With Options.JudgeNoise (--sim-judge-noise) the judge prompt is
//     answered like any other, with prose that holds no JSON: a model that
//     ignored its instructions.

// JudgeMarker is the sentence of the judge prompt that makes the model a
// judge (the original's opik_evaluator.py prompt has it).
const JudgeMarker = "Return ONLY a JSON object"

// defaultJudgeKeys are the original's three score names.
var defaultJudgeKeys = []string{"correctness", "helpfulness", "hallucination_free"}

var judgeKeyLine = regexp.MustCompile(`(?m)^\s*-\s*"([A-Za-z0-9_.-]+)"\s*:`)

// isJudgePrompt reports whether the model is asked to judge.
func isJudgePrompt(text string) bool { return strings.Contains(text, JudgeMarker) }

// JudgeKeys are the score names a judge prompt asks for.
func JudgeKeys(prompt string) []string {
	var keys []string
	seen := map[string]bool{}
	for _, m := range judgeKeyLine.FindAllStringSubmatch(prompt, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			keys = append(keys, m[1])
		}
	}
	if len(keys) == 0 {
		return defaultJudgeKeys
	}
	return keys
}

// JudgeScore is the value the simulated judge gives key for prompt.
func JudgeScore(prompt, key string) float64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(prompt))
	return float64(50+h.Sum64()%51) / 100
}

// judgeReply is the judge's answer to prompt.
func judgeReply(prompt string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range JudgeKeys(prompt) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %.2f", k, JudgeScore(prompt, k))
	}
	b.WriteByte('}')
	return b.String()
}
