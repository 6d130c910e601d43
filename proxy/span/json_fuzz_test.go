package span

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// Request bodies of the kinds the span reads: chat with tools, multimodal
// content parts, past tool calls, secrets to redact, Python's literals,
// and the member spellings encoding/json reads its own way (keys in
// another case or escaped, duplicates, nulls, values of another type).
var spanJSONBodies = []string{
	chatBody, toolBody, toolStreamBody, reasoningBody, benchChat,
	`{"messages": [{"role": "user", "content": [{"type": "text", "text": "What is this?"},` +
		`{"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},` +
		`{"type": "image_url", "image_url": {"url": "data:image/png;base64,` + strings.Repeat("A", 200) + `"}}]}], "tools": ` + toolsJSON + `}`,
	`{"messages": [{"role": "user", "content": "hi"}], "temperature": 0.2,
		"metadata": {"session_id": "s1", "API_KEY": "sk-nested-1"},
		"extra_headers": {"Authorization": "Bearer sk-nested-2"},
		"tools": [{"type": "function", "function": {"name": "f", "parameters": {"password": "sk-nested-3"}}}],
		"messages2": [{"role": "assistant", "tool_calls": [{"function": {"name": "login", "arguments": "{\"user\": \"a\", \"api_key\": \"sk-nested-4\"}"}}]}],
		"user": "alice@example.com", "x": NaN}`,
	`{"api_key": "sk-in-the-body", "Authorization": "Bearer sk-2", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}`,
	`{"messages": [{"role": "system", "content": "Be <brief> & kind\u2028"}, {"role": "user", "name": "bob", "content": "Weather?"},` +
		`{"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},` +
		`{"role": "tool", "tool_call_id": "call_1", "content": "18C"}], "temperature": Infinity, "top_p": -Infinity, "seed": NaN, "stop": ["\n", "</s>"]}`,
	`{"messages": [{"ROLE": "user", "Content": "x", "rOle": "a"}, {"\u0072ole": "user", "content": "y"}, null, {"role": "user", "content": "a", "content": "b"}]}`,
	`{"messages": [{"role": "user", "content": [null, {"type": "text", "TEXT": "t"}, {"image_url": null}, {"image_url": {}}, {"type": "image_url", "image_url": {"url": "a"}, "image_url": {"URL": "b"}}]}]}`,
	`{"messages": [{"role": 5, "content": "x"}]}`,
	`{"messages": [{"role": "user", "content": [{"type": 1}]}, {"role": "user", "content": [1]}, {"role": "user", "content": {"a": 1}}, {"role": "user", "content": 3}]}`,
	`{"messages": [{"role": "user", "content": "x", "tool_calls": [{"index": 1.5}]}]}`,
	`{"messages": [{"role": "user", "content": "x", "tool_callſ": []}, {"role": "user", "content": "y", "extra": {"role": 1}}]}`,
	`{"messages": {"role": "user"}, "tools": {"a": 1}}`,
	`{"messages": null, "tools": null, "metadata": {"session_id": 12}}`,
	`{"messages": [], "tools": [null, 1, "x", {"a" : [ 1 , 2 ] }], "model": "m<&>", "a<b": "\u00e9\ud83d", "z": 1e400}`,
	"{\"stop\": \"line\u2028sep\u2029 <b>\", \"metadata\": {\"k\": [\"\u2028\", \"&amp;\"]}, \"messages\": [{\"role\": \"user\", \"content\": \"x\u2029\"}]}",
	"{\"messages\": [{\"role\": \"user\", \"content\": \"caf\u00e9 \\u00e9 \\ud83d\\ude00 \\\" tab\\t\"}],\n\t\"response_format\" :\t{ \"type\" : \"json_object\" }\n}",
}

// Bodies as clients send them (the proxy's own tests send the same).
const (
	chatBody       = `{"model": "mlx-community/Qwen3-4B-4bit", "messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 24}`
	benchChat      = `{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 16}`
	toolsJSON      = `[{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]`
	toolBody       = `{"messages": [{"role": "user", "content": "Use get_weather for Paris"}], "tools": ` + toolsJSON + `}`
	toolStreamBody = `{"messages": [{"role": "user", "content": "Use get_weather for Paris"}], "tools": ` + toolsJSON + `, "stream": true}`
	reasoningBody  = `{"messages": [{"role": "user", "content": "Think first"}], "max_tokens": 80, "stream": true, "chat_template_kwargs": {"enable_thinking": true}}`
)

// membersOf is a body's top-level members as the proxy hands them to a
// span: JSON text, Python's NaN and Infinity as null (the proxy reads the
// body as mlx_lm does, and keeps its nulled copy's members); false when
// the body is not a JSON object.
func membersOf(body []byte) (map[string]json.RawMessage, bool) {
	nulled, _ := jsonedit.NullPythonLiterals(body)
	var fields map[string]json.RawMessage
	return fields, json.Unmarshal(nulled, &fields) == nil && fields != nil
}

// spanReaders runs the span's readers of one request, new and reference,
// with the settings given, and returns the attributes each one made.
func spanReaders(raw json.RawMessage, hide Hide, budget int, ref bool) ([]attribute.KeyValue, bool, int) {
	b := &attrs{budget: budget, room: MaxAttributes - 1}
	if ref {
		refInputMessages(b, raw, hide)
		refToolDefinitions(b, raw)
	} else {
		inputMessages(b, raw, hide)
		toolDefinitions(b, raw)
	}
	return b.kv, b.truncated, b.budget
}

// FuzzSpanJSONMatchesEncodingJSON: for any body parseBody takes, the
// span's readers of its members give what the encoding/json originals
// (reference_test.go) gave: the same messages, content parts, tool
// definitions, invocation parameters and input mime type.
func FuzzSpanJSONMatchesEncodingJSON(f *testing.F) {
	for _, s := range spanJSONBodies {
		f.Add([]byte(s))
	}
	hides := []Hide{{}, {InputText: true, Base64ImageMaxLength: 100}, {InputImages: true}}
	f.Fuzz(func(t *testing.T, body []byte) {
		fields, ok := membersOf(body)
		if !ok {
			return
		}
		pb := struct{ fields map[string]json.RawMessage }{fields}
		rf := Request{raw: body, fields: fields}
		if got, want := mimeOf(body), refMimeOf(body); got != want {
			t.Fatalf("mimeOf: %s, want %s", got, want)
		}
		in := rf.input()
		if got, want := mimeOf(in), refMimeOf(in); got != want {
			t.Fatalf("mimeOf input: %s, want %s", got, want)
		}
		for _, params := range []map[string]json.RawMessage{rf.params(), pb.fields} {
			if got, want := invocationParameters(params), refInvocationParameters(params); got != want {
				t.Fatalf("invocationParameters:\n%s\nwant\n%s", got, want)
			}
		}
		// Every member through every reader: what is not messages or
		// tools must fail alike.
		for k, v := range pb.fields {
			var want []inMessageJSON
			wantOK := json.Unmarshal(v, &want) == nil
			if got, ok := readMessages(v); ok != wantOK || ok && !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: readMessages %v %+v, want %v %+v", k, ok, got, wantOK, want)
			}
			var wantParts []contentPartJSON
			wantOK = json.Unmarshal(v, &wantParts) == nil
			if got, ok := readContentParts(v); ok != wantOK || ok && !reflect.DeepEqual(got, wantParts) {
				t.Fatalf("%s: readContentParts %v %+v, want %v %+v", k, ok, got, wantOK, wantParts)
			}
			for _, hide := range hides {
				for _, budget := range []int{1 << 20, 40} {
					gkv, gt, gb := spanReaders(v, hide, budget, false)
					wkv, wt, wb := spanReaders(v, hide, budget, true)
					if !reflect.DeepEqual(gkv, wkv) || gt != wt || gb != wb {
						t.Fatalf("%s: attributes\n%v %v %d\nwant\n%v %v %d", k, gkv, gt, gb, wkv, wt, wb)
					}
				}
			}
		}
	})
}

// FuzzNumberMatchesEncodingJSON: number reads any text as json.Unmarshal
// into a float64 did.
func FuzzNumberMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"0", "-0", "1", "0.5", "-1.5e3", "1E+2", "2e-308", "1e400", "01", "1.", ".5", "+1", "-",
		"0x10", "1_000", "Inf", "NaN", "null", " 7 ", "\t1\n", "\"1\"", "true", "[1]", "1 2", "-Infinity", "9007199254740993"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, gotOK := number(raw)
		want, wantOK := refNumber(raw)
		if gotOK != wantOK || got != want {
			t.Fatalf("%q: %v %v, want %v %v", raw, got, gotOK, want, wantOK)
		}
	})
}
