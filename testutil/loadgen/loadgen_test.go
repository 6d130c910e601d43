package loadgen

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunCallsExactlyN(t *testing.T) {
	var calls atomic.Int64
	lat, rps, err := Run(50, 4, func() error { calls.Add(1); time.Sleep(time.Millisecond); return nil })
	require.NoError(t, err)
	assert.Equal(t, int64(50), calls.Load())
	assert.Len(t, lat, 50)
	assert.Positive(t, rps)
	for _, l := range lat {
		assert.GreaterOrEqual(t, l, time.Millisecond)
	}
}

func TestRunStopsAtAnError(t *testing.T) {
	var calls atomic.Int64
	boom := errors.New("boom")
	_, _, err := Run(1000, 2, func() error {
		if calls.Add(1) == 3 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	assert.Less(t, calls.Load(), int64(1000))
}

func TestPercentile(t *testing.T) {
	d := []time.Duration{4 * time.Millisecond, time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond}
	assert.Equal(t, 1.0, Percentile(d, 0))
	assert.Equal(t, 3.0, Percentile(d, 0.5))
	assert.Equal(t, 4.0, Percentile(d, 0.99))
	assert.Equal(t, 0.0, Percentile(nil, 0.5))
}
