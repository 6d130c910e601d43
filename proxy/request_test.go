package proxy

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRouteOf(t *testing.T) {
	for _, c := range []struct {
		method, path string
		want         Route
	}{
		{"POST", "/v1/chat/completions", RouteChat},
		{"POST", "/chat/completions", RouteChat},
		{"POST", "/v1/completions", RouteText},
		{"GET", "/v1/chat/completions", RouteOther},
		{"GET", "/v1/models", RouteOther},
		{"GET", "/health", RouteOther},
		{"POST", "/v1/embeddings", RouteOther},
		{"OPTIONS", "/v1/chat/completions", RouteOther},
	} {
		assert.Equal(t, c.want, routeOf(httptest.NewRequest(c.method, c.path, nil)), "%s %s", c.method, c.path)
	}
}

func parsed(t *testing.T, cfg Config, body string) *Record {
	t.Helper()
	p := &Proxy{cfg: cfg}
	rec := &Record{}
	pb, err := parseBody([]byte(body))
	require.NoError(t, err, body)
	p.parseRequest(rec, pb.fields)
	return rec
}

func TestParseRequest(t *testing.T) {
	cfg := Config{Model: "mlx-community/Qwen3-4B-4bit", DefaultTemperature: 0.7}

	rec := parsed(t, cfg, `{"model": "m1", "stream": true, "temperature": 0.2, "tools": [{"type": "function"}], "messages": []}`)
	assert.True(t, rec.RequestParsed)
	assert.Equal(t, "m1", rec.Model)
	assert.True(t, rec.Streaming)
	assert.Equal(t, 0.2, rec.Temperature)
	assert.True(t, rec.HasTemperature)
	assert.True(t, rec.ToolsOffered)
	assert.Equal(t, KindChat, rec.Kind)

	rec = parsed(t, cfg, `{"messages": [], "tools": []}`)
	assert.Equal(t, "mlx-community/Qwen3-4B-4bit", rec.Model, "no model: the configured one")
	assert.False(t, rec.Streaming)
	assert.Equal(t, 0.7, rec.Temperature, "no temperature: the engine's default")
	assert.False(t, rec.ToolsOffered, "an empty tools list offers none")

	rec = parsed(t, cfg, `{"model": "default_model", "temperature": null}`)
	assert.Equal(t, "mlx-community/Qwen3-4B-4bit", rec.Model, "default_model is the configured model")
	assert.Equal(t, 0.7, rec.Temperature)

	rec = parsed(t, Config{}, `{}`)
	assert.Equal(t, "default_model", rec.Model, "no configured model: mlx_lm's name for it")
}

func TestParseRequestThinking(t *testing.T) {
	for body, want := range map[string]string{
		`{"chat_template_kwargs": {"enable_thinking": true}}`:  KindReasoning,
		`{"enable_thinking": true}`:                            KindReasoning,
		`{"chat_template_kwargs": {"enable_thinking": false}}`: KindChat,
		`{"chat_template_kwargs": {"enable_thinking": "yes"}}`: KindChat,
		`{"chat_template_kwargs": "enable_thinking"}`:          KindChat,
		`{}`: KindChat,
	} {
		assert.Equal(t, want, parsed(t, Config{}, body).Kind, body)
	}
}

func TestParseRequestBadInput(t *testing.T) {
	for _, body := range []string{``, `not json`, `[1, 2]`, `"text"`, `null`, `{"model": `} {
		_, err := parseBody([]byte(body))
		assert.Error(t, err, "%q is refused before it is read", body)
	}
	// Wrong types are treated as absent here; the checks refuse them.
	rec := parsed(t, Config{Model: "m"}, `{"model": 7, "temperature": "hot", "tools": {"a": 1}, "stream": "yes"}`)
	assert.True(t, rec.RequestParsed)
	assert.Equal(t, "m", rec.Model)
	assert.False(t, rec.HasTemperature)
	assert.False(t, rec.ToolsOffered)
	assert.True(t, rec.Streaming, `mlx_lm streams when "stream" is truthy in Python`)
}

func TestTruthy(t *testing.T) {
	for raw, want := range map[string]bool{
		"true": true, "false": false, "null": false, "1": true, "0": false, "0.0": false, "-2.5": true,
		`""`: false, `"x"`: true, "[]": false, "[ ]": false, "[0]": true, "{}": false, `{"a":1}`: true, "": false,
	} {
		assert.Equal(t, want, truthy(json.RawMessage(raw)), raw)
	}
}

func TestWithUsageRequested(t *testing.T) {
	cases := []struct {
		in, want string
		injected bool
	}{
		{`{"stream": true, "messages": []}`, `{"stream_options": {"include_usage": true}, "stream": true, "messages": []}`, true},
		{`{"stream": true, "stream_options": null}`, `{"stream": true, "stream_options": {"include_usage": true}}`, true},
		{`{"stream": true, "stream_options": {}}`, `{"stream": true, "stream_options": {"include_usage": true}}`, true},
		{`{"stream": true, "stream_options": {"include_usage": false, "x": 1}}`, `{"stream": true, "stream_options": {"include_usage": true, "x": 1}}`, true},
		{"{\"stream\": true,\n  \"stream_options\" :\t{ \"x\": [1] } }", "{\"stream\": true,\n  \"stream_options\" :\t{\"include_usage\": true,  \"x\": [1] } }", true},
		// The client asked for usage itself: it gets it, nothing changes.
		{`{"stream": true, "stream_options": {"include_usage": true}}`, `{"stream": true, "stream_options": {"include_usage": true}}`, false},
		// Not an object: the engine's answer is the engine's.
		{`{"stream": true, "stream_options": "usage"}`, `{"stream": true, "stream_options": "usage"}`, false},
		{`not json`, `not json`, false},
	}
	for _, c := range cases {
		out, injected := usageRequested([]byte(c.in))
		assert.Equal(t, c.want, string(out), c.in)
		assert.Equal(t, c.injected, injected, c.in)
		if injected {
			var v map[string]any
			require.NoError(t, json.Unmarshal(out, &v), "still JSON: %s", out)
			assert.Equal(t, true, v["stream_options"].(map[string]any)["include_usage"])
		}
	}
}

func FuzzWithUsageRequested(f *testing.F) {
	f.Add(`{"stream": true, "messages": [{"role": "user", "content": "hi"}]}`)
	f.Add(`{"stream_options": {"include_usage": 0}}`)
	f.Add(`{"a": {"stream_options": 1}, "stream_options": {}}`)
	f.Fuzz(func(t *testing.T, in string) {
		out, injected := usageRequested([]byte(in))
		if !injected {
			if string(out) != in {
				t.Fatalf("changed without injecting: %q -> %q", in, out)
			}
			return
		}
		var before, after map[string]json.RawMessage
		if json.Unmarshal([]byte(in), &before) != nil {
			t.Fatalf("injected into invalid JSON %q", in)
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("%q -> invalid %q: %v", in, out, err)
		}
		var opts map[string]json.RawMessage
		if err := json.Unmarshal(after["stream_options"], &opts); err != nil || string(opts["include_usage"]) != "true" {
			t.Fatalf("%q -> %q: include_usage not true", in, out)
		}
		for k, v := range before {
			if k == "stream_options" {
				continue
			}
			if compact(t, v) != compact(t, after[k]) {
				t.Fatalf("%q: member %q changed: %s -> %s", in, k, v, after[k])
			}
		}
	})
}

func compact(t *testing.T, raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("member %s: %v", raw, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// usageRequested is withUsageRequested as ServeHTTP calls it, with the
// body's own stream_options.
func usageRequested(body []byte) ([]byte, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return body, false
	}
	return withUsageRequested(body, fields["stream_options"])
}
