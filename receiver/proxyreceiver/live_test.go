package proxyreceiver

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/mlx-otelcol/mlx-otelcol/proxy"
	"github.com/mlx-otelcol/mlx-otelcol/standins/velotest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/ssetest"
)

var update = flag.Bool("update", false, "rewrite testdata/live-post.golden.json")

// checked counts the live records held against metadata.yaml.
var checked int

// forwardLive sends what the pipeline got from the from'th batch on as
// OTLP/HTTP-JSON, as the otlp_http exporter with encoding: json does, to
// VeloBenchmark's stand-in, after holding every record's attributes
// against metadata.yaml, and returns how many batches it has sent in all.
// The sink is never reset: a batch that arrives while the others are sent
// waits for the next call instead of being dropped.
func (s *stack) forwardLive(t *testing.T, velo *velotest.Server, from int) int {
	live := logKind(t, "live")
	all := s.logs.AllLogs()
	for _, ld := range all[from:] {
		checkAgainstSchema(t, schema(t).ResourceAttributes, ld.ResourceLogs().At(0).Resource().Attributes())
		lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		for i := 0; i < lrs.Len(); i++ {
			checkAgainstSchema(t, live, lrs.At(i).Attributes())
			checked++
		}
		b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalJSON()
		require.NoError(t, err)
		resp, err := http.Post(velo.Endpoint()+"/v1/logs", "application/json", bytes.NewReader(b))
		require.NoError(t, err)
		resp.Body.Close()
	}
	return len(all)
}

// clientStream reads a streamed chat as a client does.
func clientStream(t *testing.T, s *stack, body, session string) ssetest.Seen {
	req, err := http.NewRequest(http.MethodPost, s.url+"/v1/chat/completions", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(proxy.SessionHeader, session)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	seen, err := ssetest.Read(resp.Body)
	require.NoError(t, err)
	require.True(t, seen.Done)
	return seen
}

// Streams through the proxy arrive in VeloBenchmark's receiver as the
// client saw them.
func TestLiveStreamsReachVeloBenchmarkAsTheClientSawThem(t *testing.T) {
	s := newStackOf(t, RecordsLive)
	velo, err := velotest.Start()
	require.NoError(t, err)
	defer velo.Close()
	cases := map[string]string{
		"chat":      `{"messages": [{"role": "user", "content": "Tell a story"}], "max_tokens": 24, "stream": true}`,
		"reasoning": `{"messages": [{"role": "user", "content": "Think"}], "max_tokens": 40, "stream": true, "chat_template_kwargs": {"enable_thinking": true}}`,
		"tool":      `{"messages": [{"role": "user", "content": "Use get_weather"}], "stream": true, "tools": ` + toolsJSON + `}`,
	}
	want := map[string]ssetest.Seen{}
	for name, body := range cases {
		want[name] = clientStream(t, s, body, name)
	}
	// The live records reach the sink after the client's stream ended (the
	// proxy hands them on off the request path): forwarded as they come,
	// until every stream has its end. The bound is a deadline for a
	// pipeline that lost one, not a speed.
	sent := 0
	require.Eventually(t, func() bool {
		sent = s.forwardLive(t, velo, sent)
		for name := range cases {
			if st, ok := velo.Stream(name); !ok || !st.Done {
				return false
			}
		}
		return true
	}, 30*time.Second, 20*time.Millisecond)
	assert.Positive(t, checked, "records were held against metadata.yaml")
	for name := range cases {
		st, _ := velo.Stream(name)
		assert.Equal(t, want[name], ssetest.Seen{Content: st.Text, Reasoning: st.Reasoning, Tools: st.Tools, Finish: st.FinishReason, Done: true}, name)
		assert.Equal(t, "mlx-community/Qwen3-4B-4bit", st.Model)
		assert.Equal(t, "single", st.Topology)
		assert.Equal(t, 1, st.Starts)
		assert.NotEmpty(t, st.GenerationID)
	}
}

// The wire format of one POST: a golden file (go test -update rewrites it).
func TestLivePostGolden(t *testing.T) {
	at := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	recs := []*proxy.LiveRecord{
		{Time: at, Event: proxy.LiveStart, RequestID: "s-1", ModelID: "m", Topology: "single", TokenIndex: -1},
		{Time: at.Add(time.Millisecond), Event: proxy.LiveDelta, RequestID: "s-1", GenerationID: "chatcmpl-1", ModelID: "m", Topology: "single", TokenIndex: 0,
			Body: []byte(`{"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": null}]}`)},
		{Time: at.Add(2 * time.Millisecond), Event: proxy.LiveEnd, RequestID: "s-1", GenerationID: "chatcmpl-1", ModelID: "m", Topology: "single", TokenIndex: -1,
			Body: []byte(`{"choices":[{"delta":{},"finish_reason":"stop","index":0}]}`)},
		{Time: at.Add(3 * time.Millisecond), Event: proxy.LiveStatus, ModelID: "m", Topology: "single", TokenIndex: -1},
	}
	b, err := plogotlp.NewExportRequestFromLogs(liveToLogs(recs)).MarshalJSON()
	require.NoError(t, err)
	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, b, "", "  "))
	const golden = "testdata/live-post.golden.json"
	if *update {
		require.NoError(t, os.WriteFile(golden, append(pretty.Bytes(), '\n'), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), pretty.String()+"\n")
}
