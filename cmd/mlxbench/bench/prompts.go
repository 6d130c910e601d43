package bench

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
)

// The prompt sizes of the profile matrix and of load runs. The texts are
// fixed so that runs compare; a cache-busting prefix (Nonce) makes every
// request's prompt unique, because mlx_lm's prompt cache would otherwise
// answer a repeated prompt without any prefill and hide the TTFT that a
// new user sees.
var prompts = map[string]string{
	"short": "Explain in one sentence what a key-value cache does in a language model.",
	"medium": "You are reviewing the design of a small inference service. It runs one " +
		"language model on a single machine with unified memory, accepts " +
		"OpenAI-compatible chat completion requests over HTTP, streams tokens back as " +
		"server-sent events, and keeps a cache of recent prompts so that a follow-up " +
		"turn of the same conversation does not pay for its whole prefix again. A " +
		"metrics proxy in front of it records time to first token, generation speed, " +
		"queueing and errors, and a supervisor restarts the server when it crashes. " +
		"Operators complain that the first token sometimes takes several seconds under " +
		"load while the decode speed stays flat. List the three most likely causes and " +
		"one measurement that would confirm each.",
	"long": strings.Repeat("The service log shows requests arriving in bursts: a dozen within a "+
		"second, then nothing for a while. Each request carries a system prompt of a few "+
		"hundred tokens, a conversation history, and a question. The prompt cache holds ten "+
		"sequences; entries are evicted least recently used first. Memory pressure rises "+
		"during bursts and the GPU stays busy with prefill before any decoding starts. ", 6) +
		"Summarise what limits the time to first token in this service and propose a " +
		"configuration change for each limit.",
}

// PromptNames lists the prompt sizes, shortest first.
func PromptNames() []string {
	names := make([]string, 0, len(prompts))
	for n := range prompts {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return len(prompts[names[i]]) < len(prompts[names[j]]) })
	return names
}

// Prompt returns the text of a prompt size.
func Prompt(name string) (string, error) {
	p, ok := prompts[name]
	if !ok {
		return "", fmt.Errorf("unknown prompt %q (one of %s)", name, strings.Join(PromptNames(), ", "))
	}
	return p, nil
}

// Nonce is the cache-busting prefix of request n of run id: at the very
// start of the prompt, so no cached prefix beyond the chat template's
// first tokens can match. It has a fixed width in digits (run ids are
// decimal too, see RunID), because tokenizers split digits one by one:
// every request's prompt then has the same token count, and the TTFT of
// one level compares with another's.
func Nonce(run string, n int) string {
	return fmt.Sprintf("[%s-%08d] ", run, n%100_000_000)
}

// RunID is a random 8-digit decimal id of a run.
func RunID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%08d", binary.BigEndian.Uint64(b[:])%100_000_000)
}
