package doccheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetricNames(t *testing.T) {
	p := filepath.Join(t.TempDir(), "documentation.md")
	require.NoError(t, os.WriteFile(p, []byte("# x\n\n## How\n\n### not_a_metric\n\n## Metrics\n\n### b_total\n\ntext\n\n### a_seconds\n\n## Other\n\n### c\n"), 0o600))
	names, err := MetricNames(p)
	require.NoError(t, err)
	assert.Equal(t, []string{"a_seconds", "b_total"}, names)
}

func TestMetricNamesWithoutSection(t *testing.T) {
	p := filepath.Join(t.TempDir(), "documentation.md")
	require.NoError(t, os.WriteFile(p, []byte("# x\n### a\n"), 0o600))
	_, err := MetricNames(p)
	assert.Error(t, err)
}

func TestPlatforms(t *testing.T) {
	p := filepath.Join(t.TempDir(), "documentation.md")
	require.NoError(t, os.WriteFile(p, []byte("## Sources\n\n- Linux: not a metric\n\n## Metrics\n\n### a\n\nText.\n\n- macOS: powermetrics\n- Linux: procfs, only when x\n- Windows: no\n\n### b\n\n## Other\n\n- Linux: after\n"), 0o600))
	got, err := Platforms(p, "macOS", "Linux")
	require.NoError(t, err)
	assert.Equal(t, map[string]map[string]string{
		"a": {"macOS": "powermetrics", "Linux": "procfs, only when x"},
		"b": {},
	}, got)
}

func TestAttributeMatches(t *testing.T) {
	a := Attribute{Key: "llm.input_messages.<i>.message.contents.<j>.message_content.text"}
	assert.True(t, a.Matches("llm.input_messages.0.message.contents.12.message_content.text"))
	assert.False(t, a.Matches("llm.input_messages.x.message.contents.1.message_content.text"))
	assert.False(t, a.Matches("llm.input_messages.0.message.contents.1.message_content.type"))
	assert.True(t, Attribute{Key: "url.path"}.Matches("url.path"))
	assert.False(t, Attribute{Key: "url.path"}.Matches("url.paths"))
}
