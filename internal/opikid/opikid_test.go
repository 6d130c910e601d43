package opikid

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTraceAndSpanAreStableUUIDv7s(t *testing.T) {
	tid := [16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	sid := [8]byte{1, 2, 3, 4, 5, 6, 7, 8}
	start := time.Date(2026, 12, 1, 20, 0, 0, 123_456_789, time.UTC)
	id := Trace(tid, sid, start)
	assert.True(t, IsV7(id), id)
	assert.Equal(t, id, Trace(tid, sid, start), "deterministic")
	assert.Equal(t, id, Trace(tid, sid, start.Add(400*time.Microsecond)), "milliseconds only")
	got, err := Time(id)
	require.NoError(t, err)
	assert.Equal(t, start.Truncate(time.Millisecond).UnixMilli(), got.UnixMilli())

	other := sid
	other[7] ^= 1
	assert.NotEqual(t, id, Trace(tid, other, start), "another request of the same client trace")
	assert.NotEqual(t, id, Trace(tid, sid, start.Add(time.Millisecond)), "another start")
	assert.NotEqual(t, id, Span(tid, sid, start), "the span's id is not the trace's")
	// Computed independently (Python's hashlib, from the derivation in
	// the package doc), so that another tool can check itself against it.
	assert.Equal(t, "01a23331-527b-788a-b501-f39ef36897fd", id)
	assert.Equal(t, "01a23331-527b-7009-885a-f988a8671c7d", Span(tid, sid, start))
	assert.True(t, IsV7(New(start)))
	assert.NotEqual(t, New(start), New(start))
}

func TestIsV7(t *testing.T) {
	assert.True(t, IsV7("019adb9e-b1fb-7d2c-8a6b-2f0e9c1d2e3f"))
	assert.False(t, IsV7("019adb9e-b1fb-4d2c-8a6b-2f0e9c1d2e3f"), "version 4")
	assert.False(t, IsV7("019adb9e-b1fb-7d2c-ca6b-2f0e9c1d2e3f"), "wrong variant")
	assert.False(t, IsV7("not-a-uuid"))
	assert.False(t, IsV7("019adb9eb1fb7d2c8a6b2f0e9c1d2e3f0000"))
}
