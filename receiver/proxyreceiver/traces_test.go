package proxyreceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/otel/attribute"
)

// Every attribute type the OTel API has reaches the pdata span with its
// type: a slice stays a slice of the same element type.
func TestPutAttributesKeepsEveryType(t *testing.T) {
	m := pcommon.NewMap()
	putAttributes(m, []attribute.KeyValue{
		attribute.Bool("b", true), attribute.Int64("i", -3), attribute.Float64("f", 0.25), attribute.String("s", "x"),
		attribute.BoolSlice("bs", []bool{true, false}), attribute.Int64Slice("is", []int64{1, 2}),
		attribute.Float64Slice("fs", []float64{0.5}), attribute.StringSlice("ss", []string{"a", "b"}),
		attribute.StringSlice("empty", nil),
	})
	assert.Equal(t, map[string]any{
		"b": true, "i": int64(-3), "f": 0.25, "s": "x",
		"bs": []any{true, false}, "is": []any{int64(1), int64(2)}, "fs": []any{0.5}, "ss": []any{"a", "b"},
		"empty": []any{},
	}, m.AsRaw())
	is, _ := m.Get("is")
	assert.Equal(t, pcommon.ValueTypeInt, is.Slice().At(0).Type())
}
