// Package judge is the LLM-as-judge loop of the original
// cluster/opik_evaluator.py: read recent traces, ask a model (by default
// the cluster itself, through the proxy) to grade each answer with 0-1
// scores, write the scores back. The mlx_judge receiver runs it inside the
// collector; cmd/mlxjudge runs one-off passes. It has no collector types.
package judge

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultScores are the original's score names.
var DefaultScores = []string{"correctness", "helpfulness", "hallucination_free"}

// DefaultPrompt is the original's JUDGE_PROMPT, in the same Python
// str.format syntax: {question} and {answer} are filled in, {{ and }} are
// literal braces.
const DefaultPrompt = "You are an evaluator. Score the assistant's answer to the user's question " +
	"using three numbers between 0 and 1.\n\n" +
	"Question: {question}\n\n" +
	"Assistant answer: {answer}\n\n" +
	"Return ONLY a JSON object with exactly these keys:\n" +
	"- \"correctness\": how factually correct and complete the answer is\n" +
	"- \"helpfulness\": how well the answer addresses the request\n" +
	"- \"hallucination_free\": 1.0 if the answer is fully grounded in the " +
	"question and invents nothing, 0.0 if it fabricates\n" +
	"Example: {{\"correctness\": 0.9, \"helpfulness\": 0.8, \"hallucination_free\": 1.0}}"

// Reason is the original's reason on every judge score.
const Reason = "LLM-as-judge via the MLX cluster (0..1, higher is better)"

// Category is the original's category_name of judge scores.
const Category = "judge"

// CheckPrompt says what is wrong with a prompt and its score names: the
// placeholders must be there, braces balanced as str.format wants them,
// and every score named in the prompt (the judge is only asked for what
// the prompt names).
func CheckPrompt(prompt string, scores []string) error {
	if _, err := Render(prompt, "", ""); err != nil {
		return err
	}
	var errs []error
	for _, p := range []string{"{question}", "{answer}"} {
		if !strings.Contains(prompt, p) {
			errs = append(errs, fmt.Errorf("prompt: has no %s", p))
		}
	}
	if len(scores) == 0 {
		errs = append(errs, errors.New("scores: name at least one"))
	}
	seen := map[string]bool{}
	for _, s := range scores {
		switch {
		case strings.TrimSpace(s) == "":
			errs = append(errs, errors.New("scores: a name is empty"))
		case seen[s]:
			errs = append(errs, fmt.Errorf("scores: %q is named twice", s))
		case !strings.Contains(prompt, `"`+s+`"`):
			errs = append(errs, fmt.Errorf("scores: %q does not appear (quoted) in the prompt, so the judge is not asked for it", s))
		}
		seen[s] = true
	}
	return errors.Join(errs...)
}

// Render fills in the prompt as Python's str.format(question=, answer=)
// does for the fields it knows: {{ and }} are braces, {question} and
// {answer} the texts; any other field is an error.
func Render(prompt, question, answer string) (string, error) {
	var b strings.Builder
	b.Grow(len(prompt) + len(question) + len(answer))
	for i := 0; i < len(prompt); i++ {
		c := prompt[i]
		switch {
		case c == '{' && i+1 < len(prompt) && prompt[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(prompt) && prompt[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(prompt[i:], '}')
			if end < 0 {
				return "", errors.New("prompt: a '{' is not closed (write {{ for a literal brace)")
			}
			switch field := prompt[i+1 : i+end]; field {
			case "question":
				b.WriteString(question)
			case "answer":
				b.WriteString(answer)
			default:
				return "", fmt.Errorf("prompt: unknown field {%s} (only {question} and {answer}; write {{ for a literal brace)", field)
			}
			i += end
		case c == '}':
			return "", errors.New("prompt: a single '}' (write }} for a literal brace)")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// ErrNoScores is a reply with no usable scores.
var ErrNoScores = errors.New("no JSON object of scores in the reply")

// ParseScores reads the judge's reply as the original did: the text from
// the first '{' to the last '}' must be a JSON object with every named
// score, each a number (or a numeric string, or a boolean, as Python's
// float() takes them), clamped to 0-1. A reply missing any score, or with
// a NaN, is not parsed: a partial judgement is not written.
func ParseScores(reply []byte, names []string) (map[string]float64, error) {
	from := strings.IndexByte(string(reply), '{')
	to := strings.LastIndexByte(string(reply), '}')
	if from < 0 || to < from {
		return nil, ErrNoScores
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(reply[from:to+1], &obj); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoScores, err)
	}
	out := make(map[string]float64, len(names))
	for _, n := range names {
		raw, ok := obj[n]
		if !ok {
			return nil, fmt.Errorf("%w: %q is missing", ErrNoScores, n)
		}
		v, ok := pyFloat(raw)
		if !ok {
			return nil, fmt.Errorf("%w: %q is %s, not a number", ErrNoScores, n, truncate(string(raw), 40))
		}
		out[n] = math.Max(0, math.Min(1, v))
	}
	return out, nil
}

// pyFloat is float(x) for a JSON value: numbers, numeric strings and
// booleans; NaN is refused.
func pyFloat(raw json.RawMessage) (float64, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return 0, false
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case bool:
		if x {
			f = 1
		}
	case string:
		p, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, false
		}
		f = p
	default:
		return 0, false
	}
	return f, !math.IsNaN(f)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
