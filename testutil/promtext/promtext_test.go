package promtext

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const exposition = `# HELP a_total x
# TYPE a_total counter
a_total{reason="oom"} 2
a_total{reason="exit"} 0
# TYPE g gauge
g 1.5
# TYPE h_seconds histogram
h_seconds_bucket{le="1"} 1
h_seconds_bucket{le="+Inf"} 3
h_seconds_sum 4
h_seconds_count 3
`

func TestParse(t *testing.T) {
	s, err := Parse([]byte(exposition))
	require.NoError(t, err)
	assert.Equal(t, []string{"a_total", "g", "h_seconds"}, s.Names())
	v, ok := s.Value("a_total", "reason", "oom")
	assert.True(t, ok)
	assert.Equal(t, 2.0, v)
	_, ok = s.Value("a_total", "reason", "hung")
	assert.False(t, ok)
	v, _ = s.Value("h_seconds")
	assert.Equal(t, 3.0, v)
	assert.Equal(t, []string{`a_total{reason="exit"}`, `a_total{reason="oom"}`}, s.Series("a_total"))
}

func TestParseRejectsGarbage(t *testing.T) {
	_, err := Parse([]byte("# TYPE x counter\nx{ 1\n"))
	assert.Error(t, err)
}
