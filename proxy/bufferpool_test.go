package proxy

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRelayBuffersLendFullSizeBuffers(t *testing.T) {
	var pool relayBuffers
	b := pool.Get()
	require.Len(t, b, relayBufferSize)
	pool.Put(b[:10]) // the relay may hand back a shorter slice
	assert.Len(t, pool.Get(), relayBufferSize)
	pool.Put(make([]byte, 100)) // not one of ours: dropped
}

// readAnswerBody reads exactly what arrives, whatever Content-Length said.
func TestReadAnswer(t *testing.T) {
	body := strings.Repeat("x", 3000)
	for _, cl := range []int64{-1, 0, 10, 3000, 5000, 2 << 20} {
		got, err := readAnswerBody(strings.NewReader(body), cl)
		require.NoError(t, err, cl)
		assert.Equal(t, body, string(got), cl)
	}
	got, err := readAnswerBody(io.MultiReader(strings.NewReader("abc"), errReader{}), 3)
	assert.ErrorIs(t, err, errBroken)
	assert.Equal(t, "abc", string(got))
	// A limit reader in front cuts an answer larger than said.
	got, err = readAnswerBody(io.LimitReader(bytes.NewReader(make([]byte, 100)), 51), 50)
	require.NoError(t, err)
	assert.Len(t, got, 51)
}

var errBroken = errors.New("broken")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBroken }
