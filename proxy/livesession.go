package proxy

import (
	"crypto/sha256"
	"encoding"
	"encoding/json"
	"hash"
	"strings"
	"sync"

	"github.com/mlx-otelcol/mlx-otelcol/internal/chatcontent"
)

// A conversation's next request continues its live panel. VeloBenchmark
// keys a panel by request.id and takes a stream_start with a known one as
// the next turn of that panel (src/telemetry.rs); its emitter's session
// key is "X-Session-Id header, metadata.session_id, or automatic
// continuation inference" (seed 004). The first two are sessionOf's; this
// is the third, for clients that send neither (Open WebUI, most chat
// UIs): a chat request whose messages up to an assistant message are an
// earlier request's messages followed by that request's answer continues
// the earlier request's panel.
//
// Only digests are kept (SHA-256 of the body's user and the messages'
// roles and text), at
// most maxContinuations, the oldest forgotten first; each is taken by the
// first request that continues it, so two requests that branch from one
// answer make one turn and one new panel.

// maxContinuations bounds the conversations remembered.
const maxContinuations = 1024

type digest [sha256.Size]byte

// continuations maps a conversation, as its next request will send it, to
// its panel. Each put is numbered: order keeps every put's digest and
// number, and an eviction forgets a conversation only when its number is
// the one remembered now, so the stale entry of one taken and put again
// does not forget the live one early.
type continuations struct {
	mu    sync.Mutex
	panel map[digest]continuation
	order []orderedDigest // oldest first
	seq   uint64
}

type continuation struct {
	id  string
	seq uint64
}

type orderedDigest struct {
	d   digest
	seq uint64
}

// take returns the panel the conversation d continues, and forgets it.
func (c *continuations) take(d digest) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.panel[d]
	if ok {
		delete(c.panel, d)
	}
	return e.id, ok
}

// put remembers that conversation d continues panel id, as the newest.
func (c *continuations) put(d digest, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.panel == nil {
		c.panel = map[digest]continuation{}
	}
	c.seq++
	c.panel[d] = continuation{id: id, seq: c.seq}
	c.order = append(c.order, orderedDigest{d: d, seq: c.seq})
	for len(c.order) > maxContinuations {
		o := c.order[0]
		if e, ok := c.panel[o.d]; ok && e.seq == o.seq {
			delete(c.panel, o.d) // else taken, or put again since
		}
		c.order = c.order[1:]
	}
}

// liveMessage is a chat message as the conversation's digest reads it.
type liveMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// conversation reads a request's messages for the digests: lookup is the
// digest of its messages up to and including its last assistant message
// (ok false without one), and state the hash of all of them, to which
// the answer is added at the end (nil when messages cannot be read).
func conversation(fields map[string]json.RawMessage) (lookup digest, ok bool, state []byte) {
	var msgs []liveMessage
	if json.Unmarshal(fields["messages"], &msgs) != nil || len(msgs) == 0 {
		return lookup, false, nil
	}
	last := -1
	for i, m := range msgs {
		if m.Role == "assistant" {
			last = i
		}
	}
	h := sha256.New()
	// The body's user (OpenAI's end-user id), when a client sends one,
	// keeps apart the same conversation held by two people.
	writeMessage(h, "user-id", string(fields["user"]))
	for i, m := range msgs {
		writeMessage(h, m.Role, chatcontent.Text(m.Content))
		if i == last {
			copy(lookup[:], h.Sum(nil))
			ok = true
		}
	}
	state, _ = h.(encoding.BinaryMarshaler).MarshalBinary()
	return lookup, ok, state
}

// withAnswer is the digest of a conversation (its hash state) followed by
// the assistant's answer, as the next request will send it.
func withAnswer(state []byte, answer string) (digest, bool) {
	var d digest
	h := sha256.New()
	if state == nil || h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state) != nil {
		return d, false
	}
	writeMessage(h, "assistant", answer)
	copy(d[:], h.Sum(nil))
	return d, true
}

// writeMessage adds one message to a digest: its role and its text,
// trimmed (clients echo an answer with or without its edge spaces), each
// length-prefixed so that no two conversations write the same bytes.
func writeMessage(h hash.Hash, role, text string) {
	text = strings.TrimSpace(text)
	var n [8]byte
	for _, s := range []string{role, text} {
		l := uint64(len(s))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(s))
	}
}
