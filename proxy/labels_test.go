package proxy

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
)

func TestLabelSetCapsDistinctValues(t *testing.T) {
	s := newLabelSet(3, "configured")
	assert.Equal(t, "a", s.value("a"))
	assert.Equal(t, "b", s.value("b"))
	assert.Equal(t, "other", s.value("c"), "configured + a + b fill the cap")
	assert.Equal(t, "a", s.value("a"), "a kept value stays")
	assert.Equal(t, "configured", s.value("configured"))
	assert.Equal(t, "other", s.value(strings.Repeat("x", 201)))
	assert.Equal(t, "other", s.value("\xff"))
}

func TestLabelSetUnderConcurrency(t *testing.T) {
	s := newLabelSet(10)
	kept := sync.Map{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				if v := s.value(fmt.Sprintf("m%d", (g*100+i)%40)); v != otherLabel {
					kept.Store(v, true)
				}
			}
		}()
	}
	wg.Wait()
	n := 0
	kept.Range(func(any, any) bool { n++; return true })
	assert.Equal(t, 10, n, "exactly the cap, never more")
}

func TestFixedLabelSets(t *testing.T) {
	assert.Equal(t, "stop", finishReasonLabel("stop"))
	assert.Equal(t, "tool_calls", finishReasonLabel("tool_calls"))
	assert.Equal(t, "other", finishReasonLabel("eos because I felt like it"))
	assert.Equal(t, "function", toolTypeLabel(""))
	assert.Equal(t, "other", toolTypeLabel("x"))
}

func TestTokenRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

	// A stream: first text at 500 ms, 41 tokens, end at 1500 ms: the 40
	// tokens after the first took one second.
	stream := &Record{FirstOutput: at(500), Facts: span.Facts{Streaming: true, Start: t0, End: at(1500), Usage: &Usage{CompletionTokens: 41}}}
	r, ok := tokenRate(stream)
	assert.True(t, ok)
	assert.InDelta(t, 40, r, 1e-9)

	// A non-streamed answer: all tokens over the whole request.
	whole := &Record{Facts: span.Facts{Start: t0, End: at(2000), Usage: &Usage{CompletionTokens: 50}}}
	r, ok = tokenRate(whole)
	assert.True(t, ok)
	assert.InDelta(t, 25, r, 1e-9)

	// A stream whose only output was a tool call: timed like a whole answer.
	tool := &Record{Facts: span.Facts{Streaming: true, Start: t0, End: at(1000), Usage: &Usage{CompletionTokens: 30}}}
	r, _ = tokenRate(tool)
	assert.InDelta(t, 30, r, 1e-9)

	_, ok = tokenRate(&Record{FirstOutput: at(10), Facts: span.Facts{Streaming: true, Start: t0, End: at(20), Usage: &Usage{CompletionTokens: 1}}})
	assert.False(t, ok, "one token: no decoding to time")
}
