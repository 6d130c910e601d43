package mdschema

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseKeepsOrder(t *testing.T) {
	c, err := Parse([]byte(`
type: x
attributes:
  model: {description: M., type: string}
  live_reason: {description: R., type: string, name_override: reason, enum: [a, b]}
metrics:
  mlx_b_total:
    description: B.
    sum: {value_type: double, monotonic: true, aggregation_temporality: cumulative}
    attributes: [model, live_reason]
    platforms:
      macOS: ps
      Linux: procfs
  mlx_a:
    description: A.
    gauge: {value_type: double}
`))
	require.NoError(t, err)
	assert.Equal(t, []string{"mlx_b_total", "mlx_a"}, c.MetricNames())
	b, _ := c.Metrics.Get("mlx_b_total")
	assert.Equal(t, []string{"model", "reason"}, c.Labels(b))
	assert.Equal(t, []string{"macOS", "Linux"}, b.Platforms.Keys())
	assert.Equal(t, "counter", b.PromType())
}

func TestParseRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field":       "type: x\nmetrics:\n  m: {description: d, gauge: {}, colour: red}\n",
		"two types":           "type: x\nmetrics:\n  m: {description: d, gauge: {}, sum: {}}\n",
		"no type":             "type: x\nmetrics:\n  m: {description: d}\n",
		"no buckets":          "type: x\nmetrics:\n  m: {description: d, histogram: {}}\n",
		"unknown attribute":   "type: x\nmetrics:\n  m: {description: d, gauge: {}, attributes: [a]}\n",
		"no description":      "type: x\nmetrics:\n  m: {gauge: {}}\n",
		"a label twice":       "type: x\nattributes:\n  a: {description: d, type: string}\n  b: {description: d, type: string, name_override: a}\nmetrics:\n  m: {description: d, gauge: {}, attributes: [a, b]}\n",
		"no component type":   "metrics: {}\n",
		"metric listed twice": "type: x\nmetrics:\n  m: {description: d, gauge: {}}\n  m: {description: d, gauge: {}}\n",
		"enabled":             "type: x\nmetrics:\n  m: {enabled: true, description: d, gauge: {}}\n",
		"group not a name":    "type: x\nmetrics:\n  m: {group: Compat-vLLM, description: d, gauge: {}}\n",
	} {
		_, err := Parse([]byte(doc))
		assert.Error(t, err, name)
	}
}
