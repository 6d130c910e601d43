package upstream

import (
	"encoding/hex"
	"hash/fnv"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/jsonedit"
)

// promptPrefix is how much of a text completion's prompt keys its
// affinity: a conversation kept in one growing prompt keeps its first bytes
// from turn to turn once they are this long, and a prompt shorter than this
// (about 60 tokens) has little cache to lose.
const promptPrefix = 256

// AffinityKey is the key a request's upstream is chosen by (Choose): the
// client's session (X-Session-Id) when it names one; otherwise the start of
// the conversation, which every later turn resends unchanged: a chat's
// messages up to and including the first user message (the system prompt
// and the first question), a text completion's first bytes. Requests that
// start alike share that prefix in the engine's prompt cache too, so
// sending them to the same engine is what the cache wants. "" when the
// request has neither (any upstream will do).
func AffinityKey(session string, messages, prompt []byte) string {
	if session != "" {
		return "s:" + session
	}
	if p := conversationStart(messages); len(p) > 0 {
		return "m:" + digest(p)
	}
	if len(prompt) > 0 {
		return "p:" + digest(prompt[:min(len(prompt), promptPrefix)])
	}
	return ""
}

// conversationStart is messages' raw bytes from the array's start to the
// end of its first message with role "user" (all of them when none has that
// role, or when the array is not read strictly).
func conversationStart(messages []byte) []byte {
	r := jsonedit.Reader{B: messages}
	if !r.Next('[') {
		return messages
	}
	for first := true; ; first = false {
		end, ok := r.Item(first)
		if !ok {
			return messages
		}
		if end {
			return messages[:r.I]
		}
		user, ok := readMessage(&r)
		if !ok {
			return messages
		}
		if user {
			return messages[:r.I]
		}
	}
}

// readMessage reads one message object and says whether its role is "user".
func readMessage(r *jsonedit.Reader) (user, ok bool) {
	if !r.Next('{') {
		return false, r.Skip()
	}
	for first := true; ; first = false {
		key, end, ok := r.Member(first)
		if !ok {
			return false, false
		}
		if end {
			return user, true
		}
		if string(key) == "role" && r.Peek() == '"' {
			v, _, ok := r.Str()
			if !ok {
				return false, false
			}
			user = string(v) == "user"
			continue
		}
		if !r.Skip() {
			return false, false
		}
	}
}

func digest(b []byte) string {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
