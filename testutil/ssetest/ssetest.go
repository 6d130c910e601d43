// Package ssetest reads a streamed chat completion as a client does, for
// tests that compare what a client saw with what telemetry says it saw.
package ssetest

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
)

// Seen is what a client made of a stream. Tools is every tool call as
// VeloBenchmark's receiver shows it: "\n[tool <name>] <arguments>".
type Seen struct {
	Content, Reasoning, Tools, Finish string
	// Done: the stream ended with data: [DONE].
	Done bool
}

// Read reads an SSE chat completion stream to its end.
func Read(r io.Reader) (Seen, error) {
	var out Seen
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			out.Done = true
			continue
		}
		var c struct {
			Choices []struct {
				FinishReason *string `json:"finish_reason"`
				Delta        struct {
					Content, Reasoning string
					ToolCalls          []struct {
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
			}
		}
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return out, err
		}
		for _, ch := range c.Choices {
			out.Content += ch.Delta.Content
			out.Reasoning += ch.Delta.Reasoning
			for _, tc := range ch.Delta.ToolCalls {
				out.Tools += "\n[tool " + tc.Function.Name + "] " + tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				out.Finish = *ch.FinishReason
			}
		}
	}
	return out, sc.Err()
}
