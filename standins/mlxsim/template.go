package mlxsim

import (
	"fmt"
	"strings"

	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim/pyjson"
)

// Prompt construction. mlx_lm applies the model's chat template and
// tokenizes the result; the simulator renders a Qwen3-style ChatML template
// (the family mlx-oc served) and tokenizes it with tokenizer.go. That is the
// rule for prompt_tokens:
//
//	[<|im_start|>system\n{first system message}{tools block}<|im_end|>\n]
//	per message:  <|im_start|>{role}\n{content}<|im_end|>\n
//	              (assistant tool calls as <tool_call>\n{json}\n</tool_call>,
//	               tool results wrapped in <tool_response> inside a user turn)
//	generation:   <|im_start|>assistant\n  (+ <think>\n\n</think>\n\n when
//	              the model is not thinking, exactly as Qwen3 does for
//	              enable_thinking=false)
//
// and prompt_tokens is the number of tokens of that text. /v1/completions
// tokenizes the raw prompt with no template.

const toolsPreamble = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>"

const toolsPostamble = "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>"

// chatMessage is a message after process_message_content.
type chatMessage struct {
	role      any // usually a string
	content   any // string after processing, or whatever was sent
	toolCalls []any
	raw       *pyjson.Dict
}

func (m chatMessage) roleString() string {
	s, _ := m.role.(string)
	return s
}

func (m chatMessage) contentString() string {
	s, _ := m.content.(string)
	return s
}

// processMessages is process_message_content plus the checks done while
// iterating: the errors are those Python raises (str(e) goes to a 404 body).
func processMessages(v any) ([]chatMessage, *pyExc) {
	items, exc := pyIterate(v)
	if exc != nil {
		return nil, exc
	}
	out := make([]chatMessage, 0, len(items))
	for _, it := range items {
		d, ok := it.(*pyjson.Dict)
		if !ok {
			return nil, noAttr(it, "get")
		}
		m := chatMessage{raw: d}
		m.role, _ = d.Get("role")
		content, _ := d.Get("content")
		switch c := content.(type) {
		case []any:
			var frags []any
			for _, frag := range c {
				typ, exc := pySubscript(frag, "type")
				if exc != nil {
					return nil, exc
				}
				if typ != "text" {
					continue
				}
				txt, exc := pySubscript(frag, "text")
				if exc != nil {
					return nil, exc
				}
				frags = append(frags, txt)
			}
			if len(frags) != len(c) {
				return nil, &pyExc{typ: "ValueError", msg: "Only 'text' content type is supported."}
			}
			var sb strings.Builder
			for i, f := range frags {
				s, ok := f.(string)
				if !ok {
					return nil, &pyExc{typ: "TypeError", msg: fmt.Sprintf("sequence item %d: expected str instance, %s found", i, pyjson.TypeName(f))}
				}
				sb.WriteString(s)
			}
			m.content = sb.String()
		case nil:
			m.content = ""
		default:
			m.content = c
		}
		if tc, _ := d.Get("tool_calls"); pyjson.Truthy(tc) {
			calls, exc := pyIterate(tc)
			if exc != nil {
				return nil, exc
			}
			for _, call := range calls {
				cd, ok := call.(*pyjson.Dict)
				if !ok {
					return nil, noAttr(call, "get")
				}
				fn, _ := cd.Get("function")
				if !pyjson.Truthy(fn) {
					continue
				}
				fd, ok := fn.(*pyjson.Dict)
				if !ok {
					return nil, noAttr(fn, "get")
				}
				args, _ := fd.Get("arguments")
				if !pyjson.Truthy(args) {
					continue
				}
				as, ok := args.(string)
				if !ok {
					return nil, &pyExc{typ: "TypeError", msg: "the JSON object must be str, bytes or bytearray, not " + pyjson.TypeName(args)}
				}
				if _, err := pyjson.Loads(as); err != nil {
					return nil, &pyExc{typ: "json.decoder.JSONDecodeError", msg: err.Error()}
				}
			}
			m.toolCalls = calls
		}
		out = append(out, m)
	}
	return out, nil
}

// pyIterate is iter(v) for the JSON types: a dict yields its keys, a str its
// characters; anything else is not iterable.
func pyIterate(v any) ([]any, *pyExc) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case *pyjson.Dict:
		out := make([]any, 0, x.Len())
		for _, k := range x.Keys() {
			out = append(out, k)
		}
		return out, nil
	case string:
		var out []any
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, nil
	}
	return nil, &pyExc{typ: "TypeError", msg: "'" + pyjson.TypeName(v) + "' object is not iterable"}
}

// pySubscript is v[key] for a str key.
func pySubscript(v any, key string) (any, *pyExc) {
	switch x := v.(type) {
	case *pyjson.Dict:
		val, ok := x.Get(key)
		if !ok {
			return nil, &pyExc{typ: "KeyError", msg: pyjson.StrRepr(key)}
		}
		return val, nil
	case string:
		return nil, &pyExc{typ: "TypeError", msg: "string indices must be integers, not 'str'"}
	case []any:
		return nil, &pyExc{typ: "TypeError", msg: "list indices must be integers or slices, not str"}
	}
	return nil, &pyExc{typ: "TypeError", msg: "'" + pyjson.TypeName(v) + "' object is not subscriptable"}
}

func noAttr(v any, attr string) *pyExc {
	return &pyExc{typ: "AttributeError", msg: "'" + pyjson.TypeName(v) + "' object has no attribute '" + attr + "'"}
}

// renderedPrompt is the template output split where mlx_lm would split it
// for the prompt cache.
type renderedPrompt struct {
	tokens []token
	// segments: boundaries (exclusive ends) and their cache types, as
	// ResponseGenerator._tokenize computes them.
	segEnds  []int
	segTypes []string
}

func toolJSON(v any) string { return pyjson.DumpsNoASCII(v) }

// renderChat renders the messages with the Qwen3-style template.
func renderChat(msgs []chatMessage, tools []any, thinking, addGenerationPrompt bool) string {
	var b strings.Builder
	first := 0
	if len(tools) > 0 {
		b.WriteString("<|im_start|>system\n")
		if len(msgs) > 0 && msgs[0].roleString() == "system" {
			b.WriteString(msgs[0].contentString() + "\n\n")
			first = 1
		}
		b.WriteString(toolsPreamble)
		for _, t := range tools {
			b.WriteString("\n" + toolJSON(t))
		}
		b.WriteString(toolsPostamble + "<|im_end|>\n")
	} else if len(msgs) > 0 && msgs[0].roleString() == "system" {
		b.WriteString("<|im_start|>system\n" + msgs[0].contentString() + "<|im_end|>\n")
		first = 1
	}
	for i := first; i < len(msgs); i++ {
		m := msgs[i]
		role := m.roleString()
		switch role {
		case "user", "system":
			b.WriteString("<|im_start|>" + role + "\n" + m.contentString() + "<|im_end|>\n")
		case "assistant":
			content := m.contentString()
			if j := strings.LastIndex(content, thinkEndText); j >= 0 {
				content = strings.TrimLeft(content[j+len(thinkEndText):], "\n")
			}
			b.WriteString("<|im_start|>assistant\n" + content)
			for k, call := range m.toolCalls {
				cd, _ := call.(*pyjson.Dict)
				fn := cd
				if f, ok := cd.Get("function"); ok {
					if fd, ok := f.(*pyjson.Dict); ok {
						fn = fd
					}
				}
				if k == 0 && content != "" || k > 0 {
					b.WriteString("\n")
				}
				name, _ := fn.Get("name")
				ns, _ := name.(string)
				b.WriteString("<tool_call>\n{\"name\": \"" + ns + "\", \"arguments\": ")
				args, _ := fn.Get("arguments")
				if as, ok := args.(string); ok {
					b.WriteString(as)
				} else {
					b.WriteString(toolJSON(args))
				}
				b.WriteString("}\n</tool_call>")
			}
			b.WriteString("<|im_end|>\n")
		case "tool":
			if i == first || msgs[i-1].roleString() != "tool" {
				b.WriteString("<|im_start|>user")
			}
			b.WriteString("\n<tool_response>\n" + m.contentString() + "\n</tool_response>")
			if i == len(msgs)-1 || msgs[i+1].roleString() != "tool" {
				b.WriteString("<|im_end|>\n")
			}
		}
	}
	if addGenerationPrompt {
		b.WriteString("<|im_start|>assistant\n")
		if !thinking {
			b.WriteString("<think>\n\n</think>\n\n")
		}
	}
	return b.String()
}

// chatPrompt tokenizes a chat request and computes the cache segments like
// ResponseGenerator._tokenize: a "system" segment ending where the system
// prompt's rendering stops matching, a "user" segment up to a trailing
// <think> block, and the "assistant" tail. Only a prompt whose last message
// is a user message is segmented.
func chatPrompt(msgs []chatMessage, tools []any, thinking bool) (renderedPrompt, *pyExc) {
	text := renderChat(msgs, tools, thinking, true)
	toks := tokenize(text)
	rp := renderedPrompt{tokens: toks}
	if len(msgs) == 0 {
		return rp, &pyExc{typ: "IndexError", msg: "list index out of range"}
	}
	last := msgs[len(msgs)-1]
	if _, ok := last.raw.Get("role"); !ok {
		return rp, &pyExc{typ: "KeyError", msg: "'role'"}
	}
	if last.role != "user" {
		rp.segEnds = []int{len(toks)}
		rp.segTypes = []string{"assistant"}
		return rp, nil
	}
	numSystem := 0
	for _, m := range msgs {
		if m.role != "system" {
			break
		}
		numSystem++
	}
	sysEnd := 0
	if numSystem > 0 {
		sysMsgs := append(append([]chatMessage{}, msgs[:numSystem]...), chatMessage{role: "user", content: "", raw: pyjson.NewDict("role", "user", "content", "")})
		sysToks := tokenize(renderChat(sysMsgs, tools, thinking, false))
		for i := 0; i < len(sysToks) && i < len(toks); i++ {
			if sysToks[i].id != toks[i].id {
				sysEnd = i
				break
			}
		}
	}
	var ends []int
	var types []string
	if sysEnd > 0 && sysEnd < len(toks) {
		ends = append(ends, sysEnd)
		types = append(types, "system")
	}
	tailStart := len(toks)
	for i := len(toks) - 1; i >= 0 && i >= len(toks)-11; i-- {
		if toks[i].id == tokThink {
			tailStart = i
			break
		}
	}
	if sysEnd < tailStart {
		ends = append(ends, tailStart)
		types = append(types, "user")
	}
	if tailStart < len(toks) {
		ends = append(ends, len(toks))
		types = append(types, "assistant")
	}
	if len(ends) == 0 {
		ends = []int{len(toks)}
		types = []string{"assistant"}
	}
	rp.segEnds = ends
	rp.segTypes = types
	return rp, nil
}

// textPrompt tokenizes a /v1/completions prompt (no template).
func textPrompt(p any) (renderedPrompt, *pyExc) {
	s, ok := p.(string)
	if !ok {
		return renderedPrompt{}, &pyExc{typ: "TypeError", msg: "TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]"}
	}
	toks := tokenize(s)
	return renderedPrompt{tokens: toks, segEnds: []int{len(toks)}, segTypes: []string{"assistant"}}, nil
}

// HasThinking says whether a model's vocabulary has <think> and </think>,
// so that mlx_lm reasons by default: mlx-lm v0.31.2 and later set
// kwargs["enable_thinking"] = self.has_thinking when neither
// --chat-template-args nor the request set it (mlx_lm v0.31.3
// tokenizer_utils.py, TokenizerWrapper.apply_chat_template, from commit
// f26fddfd; has_thinking is the vocabulary test, _infer_thinking), and
// Qwen3's own template thinks unless enable_thinking is
// false, so mlx-lm 0.30.7 reasons too. Every Qwen3 release has the tokens
// (the Instruct-2507 models among them); the simulated vocabulary is
// Qwen3's, so the name decides.
func HasThinking(model string) bool {
	return strings.Contains(strings.ToLower(model), "qwen3")
}
