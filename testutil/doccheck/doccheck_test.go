package doccheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
)

const testMetadata = `type: x
attributes:
  model: {description: M., type: string}
metrics:
  mlx_b_total:
    description: B.
    sum: {value_type: double, monotonic: true, aggregation_temporality: cumulative}
    attributes: [model]
    platforms: {macOS: ps, Linux: procfs}
  mlx_a:
    description: A.
    unit: s
    gauge: {value_type: double}
`

func TestMetadata(t *testing.T) {
	p := filepath.Join(t.TempDir(), "metadata.yaml")
	require.NoError(t, os.WriteFile(p, []byte(testMetadata), 0o600))
	names, err := MetadataNames(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"mlx_a", "mlx_b_total"}, names)
	got, err := MetadataPlatforms(p, "Linux")
	require.NoError(t, err)
	assert.Equal(t, map[string]map[string]string{"mlx_a": {}, "mlx_b_total": {"Linux": "procfs"}}, got)

	md := pmetric.NewMetrics()
	ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	a := ms.AppendEmpty()
	a.SetName("mlx_a")
	a.SetDescription("A.")
	a.SetUnit("s")
	a.SetEmptyGauge().DataPoints().AppendEmpty()
	b := ms.AppendEmpty()
	b.SetName("mlx_b_total")
	b.SetDescription("B.")
	b.SetEmptySum().SetIsMonotonic(true)
	b.Sum().DataPoints().AppendEmpty().Attributes().PutStr("model", "m")
	assert.NoError(t, CheckMetrics(p, md))

	b.SetDescription("other")
	b.SetUnit("By")
	b.Sum().SetIsMonotonic(false)
	b.Sum().DataPoints().At(0).Attributes().PutStr("extra", "x")
	c := ms.AppendEmpty()
	c.SetName("mlx_c")
	c.SetEmptyGauge()
	err = CheckMetrics(p, md)
	require.Error(t, err)
	for _, want := range []string{"mlx_b_total: help", "mlx_b_total: a sum (monotonic false)", `mlx_b_total: unit "By", metadata.yaml says ""`, "mlx_b_total: labels [extra model]", "mlx_c: not in metadata.yaml"} {
		assert.ErrorContains(t, err, want)
	}
}

func TestCheckAttributes(t *testing.T) {
	c, err := mdschema.Parse([]byte(`type: x
span_attributes:
  url.path: {type: string, set: always, description: d}
  mlx.tool_calls: {type: int, set: answer, description: d}
  llm.prompts: {type: slice, element_type: string, content: true, description: d}
  llm.input_messages.<i>.message.role: {type: string, content: true, set: chat, description: d}
`))
	require.NoError(t, err)
	m := pcommon.NewMap()
	m.PutStr("url.path", "/v1/completions")
	m.PutInt("mlx.tool_calls", 1)
	m.PutEmptySlice("llm.prompts").AppendEmpty().SetStr("p")
	m.PutStr("llm.input_messages.3.message.role", "user")
	assert.NoError(t, CheckAttributes(c.SpanAttributes, m))

	m.Remove("url.path")
	m.PutStr("mlx.tool_calls", "1")
	p, _ := m.Get("llm.prompts")
	p.Slice().AppendEmpty().SetInt(2)
	m.PutStr("llm.input_messages.x.message.role", "user")
	err = CheckAttributes(c.SpanAttributes, m)
	require.Error(t, err)
	for _, want := range []string{
		"url.path: missing, metadata.yaml says it is always set",
		"mlx.tool_calls: a Str, metadata.yaml says int",
		"llm.prompts: element 1 is a Int, metadata.yaml says string[]",
		"llm.input_messages.x.message.role: not in metadata.yaml",
	} {
		assert.ErrorContains(t, err, want)
	}
}
