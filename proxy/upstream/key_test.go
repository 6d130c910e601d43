package upstream

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A multi-turn chat keeps its key from the first turn on, with or without a
// system prompt, and two conversations that start differently differ.
func TestAConversationKeepsItsKey(t *testing.T) {
	for _, sys := range []string{"", `{"role": "system", "content": "You are terse."}, `} {
		turn1 := `[` + sys + `{"role": "user", "content": "What is MLX?"}]`
		turn2 := `[` + sys + `{"role": "user", "content": "What is MLX?"}, {"role": "assistant", "content": "An array framework."}, {"role": "user", "content": "By whom?"}]`
		turn3 := strings.TrimSuffix(turn2, "]") + `, {"role": "assistant", "content": "Apple."}, {"role": "user", "content": "Since when?"}]`
		k1 := AffinityKey("", []byte(turn1), nil)
		assert.NotEmpty(t, k1)
		assert.Equal(t, k1, AffinityKey("", []byte(turn2), nil))
		assert.Equal(t, k1, AffinityKey("", []byte(turn3), nil))
		other := `[` + sys + `{"role": "user", "content": "What is Metal?"}]`
		assert.NotEqual(t, k1, AffinityKey("", []byte(other), nil))
	}
}

func TestTheSessionNamesTheKey(t *testing.T) {
	m := []byte(`[{"role": "user", "content": "hi"}]`)
	assert.Equal(t, "s:abc", AffinityKey("abc", m, nil))
	assert.NotEqual(t, AffinityKey("abc", m, nil), AffinityKey("abd", m, nil))
}

func TestATextPromptKeysByItsStart(t *testing.T) {
	head := strings.Repeat("You are a helpful assistant. ", 10) // past promptPrefix
	k := AffinityKey("", nil, []byte(`"`+head+`Q: one"`))
	assert.Equal(t, k, AffinityKey("", nil, []byte(`"`+head+`Q: one A: 1 Q: two"`)))
	assert.NotEqual(t, k, AffinityKey("", nil, []byte(`"Another start `+head+`"`)))
	assert.Empty(t, AffinityKey("", nil, nil), "nothing to key on")
}

// What the strict reader refuses still keys, by the whole array: the same
// bytes, the same upstream.
func TestOddMessagesStillKey(t *testing.T) {
	for _, m := range []string{`[{"role": "us\u0065r", "content": "x"}]`, `{"not": "an array"}`, `[1, 2, {"role": "user"}]`, `[{"rol`} {
		k := AffinityKey("", []byte(m), nil)
		assert.NotEmpty(t, k, m)
		assert.Equal(t, k, AffinityKey("", []byte(m), nil), m)
	}
}

func FuzzAffinityKey(f *testing.F) {
	f.Add([]byte(`[{"role": "system", "content": "s"}, {"role": "user", "content": "u"}, {"role": "assistant"}]`))
	f.Add([]byte(`[{"role": 1}, {"role": "user"}]`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		k := AffinityKey("", b, nil)
		if len(b) > 0 && k == "" {
			t.Fatalf("no key for %q", b)
		}
		// Once a user message ended the start, what follows it (later
		// turns) never changes it.
		start := conversationStart(b)
		if len(start) < len(b) {
			more := append(append([]byte(nil), start...), `, {"role": "assistant"}, {]`...)
			if got := conversationStart(more); string(got) != string(start) {
				t.Fatalf("start %q became %q with later turns", start, got)
			}
		}
	})
}
