package dashrender

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fake answers each expression with fixed series.
type fake map[string][]Series

func (f fake) Query(expr string, _ time.Time) ([]Series, error) { return f[expr], nil }
func (f fake) QueryRange(expr string, _, _ time.Time, _ time.Duration) ([]Series, error) {
	return f[expr], nil
}

var end = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func pt(v float64) []Point { return []Point{{T: end, V: v}} }

const dash = `{"uid": "x", "title": "X", "time": {"from": "now-30m", "to": "now"}, "panels": [
 {"id": 1, "type": "table", "title": "merged",
  "targets": [{"refId": "A", "expr": "status", "instant": true}, {"refId": "B", "expr": "info", "instant": true}],
  "transformations": [{"id": "merge", "options": {}},
    {"id": "organize", "options": {"excludeByName": {"Value #B": true}, "renameByName": {"Value #A": "status"}, "indexByName": {"node": 0, "status": 1, "version": 2}}}],
  "options": {"sortBy": [{"displayName": "status"}]},
  "fieldConfig": {"defaults": {}, "overrides": [{"matcher": {"id": "byName", "options": "status"},
    "properties": [{"id": "mappings", "value": [{"type": "value", "options": {"0": {"text": "no data", "color": "#8e8e8e"}, "3": {"text": "up", "color": "green"}}}]},
                   {"id": "custom.cellOptions", "value": {"type": "color-text"}}]}]}},
 {"id": 2, "type": "table", "title": "matrix", "targets": [{"refId": "A", "expr": "status", "instant": true}],
  "transformations": [{"id": "groupingToMatrix", "options": {"rowField": "node", "columnField": "role", "valueField": "Value"}}]},
 {"id": 3, "type": "stat", "title": "empty", "fieldConfig": {"defaults": {"noValue": "none"}}, "targets": [{"refId": "A", "expr": "nothing"}]},
 {"id": 4, "type": "stat", "title": "age", "fieldConfig": {"defaults": {"unit": "s", "thresholds": {"steps": [{"color": "green", "value": null}, {"color": "red", "value": 60}]}}},
  "targets": [{"refId": "A", "expr": "age", "legendFormat": "{{node}} {{role}}"}]}
]}`

func TestEvaluate(t *testing.T) {
	var d Dashboard
	require.NoError(t, json.Unmarshal([]byte(dash), &d))
	q := fake{
		"status": {
			{Labels: map[string]string{"node": "a", "role": "proxy"}, Points: pt(3)},
			{Labels: map[string]string{"node": "b", "role": "proxy"}, Points: pt(0)},
			{Labels: map[string]string{"node": "b", "role": "hardware"}, Points: pt(3)},
		},
		"info": {
			{Labels: map[string]string{"node": "a", "role": "proxy", "version": "0.1.0"}, Points: pt(1)},
			{Labels: map[string]string{"node": "b", "role": "proxy", "version": "0.0.9"}, Points: pt(1)},
		},
		"age": {{Labels: map[string]string{"node": "b", "role": "proxy"}, Points: pt(900)}},
	}
	r, err := Evaluate(d, q, end)
	require.NoError(t, err)

	m, _ := r.Panel("merged")
	tb := m.Table
	assert.Equal(t, []string{"node", "status", "version", "role"}, tb.Columns)
	require.Len(t, tb.Rows, 3, "info's rows joined to status's on node and role")
	assert.Equal(t, []string{"b", "no data", "#8e8e8e", "0.0.9"}, []string{tb.Rows[0][0].Text, tb.Rows[0][1].Text, tb.Rows[0][1].Colour, tb.Rows[0][2].Text}, "sorted by status: no data first")
	assert.Equal(t, "up", tb.Rows[1][1].Text)

	mx, _ := r.Panel("matrix")
	assert.Equal(t, []string{`node\role`, "hardware", "proxy"}, mx.Table.Columns)
	row, i := mx.Table.Row(`node\role`, "a")
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, []string{"a", "", "3"}, []string{row[0].Text, row[1].Text, row[2].Text}, "a has no hardware role")

	e, _ := r.Panel("empty")
	assert.Empty(t, e.Items)
	assert.Equal(t, "none", e.NoValue)

	a, _ := r.Panel("age")
	require.Len(t, a.Items, 1)
	assert.Equal(t, Cell{Name: "b proxy", Text: "15.0 min", Colour: "red"}, Cell{Name: a.Items[0].Name, Text: a.Items[0].Text, Colour: a.Items[0].Colour})

	page, err := HTML(r, "note")
	require.NoError(t, err)
	assert.Contains(t, string(page), "15.0 min")
	assert.Contains(t, string(page), "no data")
}
