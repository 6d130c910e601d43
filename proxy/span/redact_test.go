package span

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Credential-like members are redacted at any depth, in input.value and in
// llm.invocation_parameters; with capture_content off the parameters keep
// only the sampling ones.
func TestSecretsAreRedactedAtAnyDepth(t *testing.T) {
	body := []byte(`{"messages": [{"role": "user", "content": "hi"}], "temperature": 0.2,
		"metadata": {"session_id": "s1", "API_KEY": "sk-nested-1"},
		"extra_headers": {"Authorization": "Bearer sk-nested-2"},
		"tools": [{"type": "function", "function": {"name": "f", "parameters": {"password": "sk-nested-3"}}}],
		"messages2": [{"role": "assistant", "tool_calls": [{"function": {"name": "login", "arguments": "{\"user\": \"a\", \"api_key\": \"sk-nested-4\"}"}}]}],
		"user": "alice@example.com", "x": NaN}`)
	fields, ok := membersOf(body)
	require.True(t, ok)
	pb := struct{ fields map[string]json.RawMessage }{fields}
	rf := Request{raw: body, fields: fields}
	in := string(rf.input())
	params, err := json.Marshal(rf.params())
	require.NoError(t, err)
	for _, secret := range []string{"sk-nested-1", "sk-nested-2", "sk-nested-3", "sk-nested-4"} {
		assert.NotContains(t, in, secret)
		assert.NotContains(t, string(params), secret)
	}
	assert.Contains(t, in, Redacted)
	assert.Contains(t, in, `"s1"`, "what is not a secret stays")
	assert.Contains(t, string(params), "alice@example.com", "with content, the parameters keep user")

	plain := []byte(`{"messages": [], "max_tokens": 8}`)
	pb.fields, ok = membersOf(plain)
	require.True(t, ok)
	assert.Equal(t, plain, (&Request{raw: plain, fields: pb.fields}).input(), "a body without secrets is kept byte for byte")

	// capture_content off: no raw body kept, and only sampling parameters.
	off := Request{fields: pb.fields}
	off.fields, ok = membersOf(body)
	require.True(t, ok)
	got := off.params()
	assert.Contains(t, got, "temperature")
	for _, k := range []string{"user", "metadata", "extra_headers", "x"} {
		assert.NotContains(t, got, k)
	}
}

func TestMayHoldSecret(t *testing.T) {
	for b, want := range map[string]bool{
		`{"max_tokens": 1}`:           false,
		`{"Api_Key": "x"}`:            true,
		`{"a": {"client_secret": 1}}`: true,
		`{"tokens": [1]}`:             false,
		`{"TOKEN": 1}`:                true,
	} {
		assert.Equal(t, want, mayHoldSecret([]byte(b)), b)
	}
}

// FuzzMayHoldSecret holds the one-pass scan to the plain reading of its
// rule: some key, in any case, quoted or quoted with escaped quotes.
func FuzzMayHoldSecret(f *testing.F) {
	for _, s := range []string{`{"max_tokens": 1}`, `{"Api_Key": "x"}`, `{"a": {"client_secret": 1}}`, `{"tokens": [1]}`,
		`{"TOKEN": 1}`, `{"arguments": "{\"Password\": 1}"}`, `"token\"`, `\"token"`, `"x-api-key`, `""token"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		lb := make([]byte, len(b)) // ASCII lower case, as the rule reads keys
		for i, c := range b {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			lb[i] = c
		}
		want := false
		for _, k := range []string{"api_key", "apikey", "api-key", "x-api-key", "authorization", "access_token", "token",
			"password", "secret", "client_secret"} {
			want = want || bytes.Contains(lb, []byte(`"`+k+`"`)) || bytes.Contains(lb, []byte(`\"`+k+`\"`))
		}
		if got := mayHoldSecret(b); got != want {
			t.Fatalf("mayHoldSecret(%q) = %v, want %v", b, got, want)
		}
	})
}
