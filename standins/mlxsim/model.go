package mlxsim

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
)

// The simulated language model. What it "says" is a pure function of
// --sim-seed and the request:
//
//   - rng = PCG(seed, hash(prompt token ids, request seed, temperature)).
//     The prompt determines the text, so the same conversation gives the
//     same answer streamed or not, with or without logprobs, and max_tokens
//     only cuts it short (as greedy decoding would).
//   - The answer is sentences of pseudo-English built from a fixed
//     vocabulary; every word (with its leading space) and every punctuation
//     mark is one token. Its natural length is drawn uniformly from 16..96
//     tokens, completed to the end of the sentence, then the end-of-turn
//     token (<|im_end|>, or <|endoftext|> for /v1/completions) follows.
//   - When thinking, the answer is preceded by <think>\n{8..48 tokens}\n</think>\n\n.
//   - When the request has tools and its last message is a user message that
//     mentions a tool's function name (case-insensitive), the model calls
//     the first such tool instead of answering:
//     <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call><|im_end|>.
//   - A judge prompt (judge.go) is answered with a JSON object of scores.
//   - Every token carries a log-probability distribution (see logprobs.go).

var (
	determiners = []string{"the", "a", "this", "each", "every", "that", "our", "its"}
	adjectives  = []string{"quick", "large", "small", "local", "new", "stable", "simple", "careful", "fast", "useful", "clear", "short", "long", "early", "recent", "common", "main", "final", "single", "open"}
	nouns       = []string{"model", "request", "answer", "server", "token", "cache", "prompt", "result", "question", "system", "user", "network", "memory", "machine", "process", "value", "step", "method", "example", "idea", "problem", "response", "context", "reason", "detail", "path", "test", "record", "message", "plan"}
	verbs       = []string{"uses", "needs", "keeps", "shows", "finds", "builds", "reads", "writes", "makes", "checks", "returns", "holds", "moves", "explains", "handles", "starts", "follows", "changes", "improves", "supports"}
	adverbs     = []string{"quickly", "carefully", "often", "usually", "clearly", "simply", "again", "still", "always", "rarely"}
	preps       = []string{"in", "on", "with", "for", "from", "into", "after", "before", "under", "over"}
	openers     = []string{"Sure", "Yes", "Well", "Indeed", "Okay", "First", "Also", "Then", "Finally", "Overall"}
	thinkOpen   = []string{"Okay", "Alright", "Hmm", "So", "Let"}
)

func pick(r *rand.Rand, l []string) string { return l[r.IntN(len(l))] }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// sentence returns one sentence of pseudo-English (no leading space).
func sentence(r *rand.Rand) string {
	var w []string
	if r.IntN(4) == 0 {
		w = append(w, pick(r, openers)+",")
		w = append(w, pick(r, determiners))
	} else {
		w = append(w, capitalize(pick(r, determiners)))
	}
	if r.IntN(2) == 0 {
		w = append(w, pick(r, adjectives))
	}
	w = append(w, pick(r, nouns))
	if r.IntN(3) == 0 {
		w = append(w, pick(r, adverbs))
	}
	w = append(w, pick(r, verbs), pick(r, determiners))
	if r.IntN(2) == 0 {
		w = append(w, pick(r, adjectives))
	}
	w = append(w, pick(r, nouns))
	if r.IntN(2) == 0 {
		w = append(w, pick(r, preps), pick(r, determiners), pick(r, nouns))
	}
	return strings.Join(w, " ") + "."
}

// proseText produces at least minTokens tokens of text in whole sentences,
// in paragraphs of two to four sentences.
func proseText(r *rand.Rand, minTokens int, first []string) string {
	var b strings.Builder
	inPara := 0
	paraLen := 2 + r.IntN(3)
	for n := 0; n < minTokens; n = len(tokenize(b.String())) {
		s := sentence(r)
		if len(first) > 0 && b.Len() == 0 {
			s = pick(r, first) + ", " + strings.ToLower(s[:1]) + s[1:]
		}
		if b.Len() > 0 {
			if inPara >= paraLen {
				b.WriteString("\n\n")
				inPara = 0
				paraLen = 2 + r.IntN(3)
			} else {
				b.WriteString(" ")
			}
		}
		b.WriteString(s)
		inPara++
	}
	return b.String()
}

// genTok is one generated token with its log-probabilities.
type genTok struct {
	tok  token
	lp   float64    // logprob of the sampled token
	alts []topEntry // the 11 most likely tokens, most likely first
	perm uint64     // seeds the "undefined" order argpartition returns
}

type topEntry struct {
	tok token
	lp  float64
}

// genRequest is what the model sees.
type genRequest struct {
	chat        bool
	prompt      []int
	msgs        []chatMessage
	tools       []any
	thinking    bool
	temperature float64
	seed        *pyjson.Int
	judgeNoise  bool // a judge prompt is answered with prose (judge.go)
}

func requestRNG(simSeed int64, g genRequest) *rand.Rand {
	h := fnv.New64a()
	var buf [8]byte
	for _, id := range g.prompt {
		binary.LittleEndian.PutUint64(buf[:], uint64(id))
		_, _ = h.Write(buf[:])
	}
	if g.seed != nil {
		_, _ = h.Write([]byte("seed:" + g.seed.Text))
	}
	if g.temperature > 0 {
		binary.LittleEndian.PutUint64(buf[:], math.Float64bits(g.temperature))
		_, _ = h.Write(buf[:])
	}
	return rand.New(rand.NewPCG(uint64(simSeed), h.Sum64()))
}

// generate produces the model's whole output for a request, up to and
// including its end-of-turn token.
func generate(simSeed int64, g genRequest) []genTok {
	r := requestRNG(simSeed, g)
	var toks []token
	if g.chat && g.thinking {
		toks = append(toks, token{tokThink, thinkStartText})
		reasoning := "\n" + proseText(r, 8+r.IntN(41), thinkOpen) + "\n"
		toks = append(toks, tokenize(reasoning)...)
		toks = append(toks, token{tokThinkEnd, thinkEndText})
		toks = append(toks, tokenize("\n\n")...)
	}
	if last := lastUserText(g.msgs); g.chat && !g.judgeNoise && isJudgePrompt(last) {
		toks = append(toks, tokenize(judgeReply(last))...)
	} else if tool := triggeredTool(g); tool != nil {
		call := toolCallJSON(r, tool, lastUserText(g.msgs))
		toks = append(toks, token{tokToolCall, toolCallStart})
		toks = append(toks, tokenize("\n"+call+"\n")...)
		toks = append(toks, token{tokToolCallEnd, toolCallEnd})
	} else {
		toks = append(toks, tokenize(proseText(r, 16+r.IntN(81), nil))...)
	}
	if g.chat {
		toks = append(toks, token{tokImEnd, imEndText})
	} else {
		toks = append(toks, token{tokEndOfText, endOfTextString})
	}
	out := make([]genTok, len(toks))
	for i, t := range toks {
		out[i] = sampleDistribution(r, t, g.temperature)
	}
	return out
}

func lastUserText(msgs []chatMessage) string {
	if len(msgs) == 0 {
		return ""
	}
	return msgs[len(msgs)-1].contentString()
}
