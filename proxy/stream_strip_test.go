package proxy

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/proxy/span"
)

// A stream whose logprobs the proxy asked for, from an engine that streams
// them (mlxsim --sim-stream-logprobs; mlx_lm 0.31.3 does not): the tap
// takes them out of every chunk (appendStripped) and reads the chunk with
// them (wire.DecodeStripped), with no chunk left unread, and the client gets
// none of them.
func TestStreamedLogprobsAreTakenOutAndRecorded(t *testing.T) {
	var stream []byte
	chunks := 0
	for _, c := range simChunks(t, true) {
		stream = append(append(append(stream, "data: "...), c.data...), "\n\n"...)
		if bytes.Contains(c.data, logprobsKey) {
			chunks++
		}
	}
	require.NotZero(t, chunks, "the simulated engine streamed no logprobs")
	rec := &Record{Facts: span.Facts{LogprobsSource: SourceStreamed}}
	tap := newStreamTap(context.Background(), io.NopCloser(bytes.NewReader(stream)), rec, false)
	client, err := io.ReadAll(tap)
	require.NoError(t, err)
	assert.NotContains(t, string(client), "logprobs")
	assert.Zero(t, rec.ChunksUnread)
	require.NotEmpty(t, rec.Choices)
	for i, ch := range rec.Choices {
		assert.NotEmpty(t, ch.Logprobs, "choice %d has no logprobs", i)
	}
}
