package dashboards

import (
	"strconv"
	"strings"
	"sync"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// Selectors. Every query names its job: the same series name from another
// job must never mix in. $model and $node are multi-value variables (".*"
// for All), so they are only used in regexp matchers.
const (
	selProxy = `job="mlx-proxy", model=~"$model"`
	// The proxy's OpenTelemetry GenAI series name the model as GenAI does.
	selGenAI = `job="mlx-proxy", gen_ai_request_model=~"$model"`
	// The vLLM-named gauges (compat: [vllm]) name the model as vLLM does.
	selVLLM = `job="mlx-proxy", model_name=~"$model"`
	selHW   = `job="mlx-hw", node=~"$node"`
	selSup  = `job="mlx-supervisor"`
	selKV   = `job="mlx-kv"`
	selLog  = `job="mlx-logtailer"`
	selCol  = `job="mlx-otelcol", node=~"$node"`
	rate    = `$__rate_interval`
)

// Reasons a query may legitimately return nothing on a Linux demo stack.
const (
	macOS         = "macos-only: powermetrics / IOKit / pmset (Apple Silicon)"
	nvidiaOnly    = "nvidia-only: Linux nodes with nvidia-smi"
	sensorOnly    = "sensor-only: needs CPU temperature sensors (Apple Silicon, or Linux hwmon)"
	faultAlerts   = "fault-only: no alert is firing"
	faultCrash    = "fault-only: no engine crash yet"
	cfgQueue      = "config-only: exporters with a sending queue (otlp, otlphttp...)"
	cfgKVBytes    = "config-only: mlx_kv_cache_max_bytes exists when prompt_cache_bytes is configured"
	toolsOnly     = "workload-only: requests that offer tools and get tool calls back"
	macOSSysctl   = "platform-only: macOS sysctl kern.memorystatus_vm_pressure_level, or Linux with pressure stall information (/proc/pressure)"
	faultSends    = "fault-only: the collector counts failed sends from the first failure"
	faultSpans    = "fault-only: the collector counts failed span exports from the first failure (the stack test has one)"
	hybridOnly    = "model-only: hybrid linear-attention models (Qwen3.5), whose config.json has the linear_* keys; the demo serves Qwen3-4B"
	mtpOnly       = "model-only: models with multi-token prediction layers (mtp_num_hidden_layers in config.json)"
	flagsOnly     = "fault-only: created by the first flagged response"
	faultUnscored = "fault-only: created by the first answer whose logprobs could not be scored"
	faultFailed   = "fault-only: created by the first completion request that failed"
	cfgVLLM       = "config-only: the proxy's compat: [vllm] (the KV usage also needs an mlx_kvcache receiver that has seen a cache state)"
	cfgOpik       = "config-only: the opik exporter with OPIK_URL set, once a scored trace was read back"
	cfgRouting    = "config-only: the proxy's upstreams (several engines behind one proxy)"
)

// sub fills {P} {G} {HW} {SUP} {KV} {LOG} {COL} {R} in a query.
func sub(s string) string {
	return strings.NewReplacer(
		"{P}", selProxy, "{G}", selGenAI, "{V}", selVLLM, "{HW}", selHW, "{SUP}", selSup, "{KV}", selKV,
		"{LOG}", selLog, "{COL}", selCol, "{R}", rate,
	).Replace(s)
}

// q is a range query in code mode on the datasource variable, its
// selectors filled in (sub). An empty legend is Grafana's automatic one.
// render.go gives the refIds, A, B... in the panel's order.
func q(expr, legend string) *prometheus.DataqueryBuilder {
	if legend == "" {
		legend = "__auto"
	}
	return prometheus.NewDataqueryBuilder().
		Datasource(ds()).
		EditorMode(prometheus.QueryEditorModeCode).
		Expr(sub(expr)).
		LegendFormat(legend).
		Range()
}

// mayBeEmpty holds why a query may return nothing (qe), by expression:
// the SDK's query type has no field for it, and it goes to
// expected-empty.yml, not into the dashboard. render.go looks each query
// up here.
var mayBeEmpty = struct {
	sync.Mutex
	why      map[string]string
	conflict map[string]bool // one expression, two reasons
}{why: map[string]string{}, conflict: map[string]bool{}}

// qe is a query that may be empty, and why.
func qe(expr, legend, why string) *prometheus.DataqueryBuilder {
	b := q(expr, legend)
	e := sub(expr)
	mayBeEmpty.Lock()
	defer mayBeEmpty.Unlock()
	if old, ok := mayBeEmpty.why[e]; ok && old != why {
		mayBeEmpty.conflict[e] = true
	}
	mayBeEmpty.why[e] = why
	return b
}

// emptyReason is why the query may return nothing ("" if it should not),
// and false when two qe gave it different reasons.
func emptyReason(expr string) (string, bool) {
	mayBeEmpty.Lock()
	defer mayBeEmpty.Unlock()
	return mayBeEmpty.why[expr], !mayBeEmpty.conflict[expr]
}

// instant makes a table's query: the last value of each series, as a
// table (one row per series).
func instant(b *prometheus.DataqueryBuilder) *prometheus.DataqueryBuilder {
	return b.Instant().Format(prometheus.PromQueryFormatTable)
}

// quantiles is one histogram_quantile query per percentile (50, 95,
// 99), legended pN.
func quantiles(metric, sel string, percentiles ...int) []cog.Builder[variants.Dataquery] {
	var out []cog.Builder[variants.Dataquery]
	for _, p := range percentiles {
		f := strconv.FormatFloat(float64(p)/100, 'f', -1, 64)
		out = append(out, q(`histogram_quantile(`+f+`, sum by (le) (rate(`+metric+`_bucket{`+sel+`}[{R}])))`, "p"+strconv.Itoa(p)))
	}
	return out
}

// bucketHeatmap is a histogram's buckets as a heatmap's cells: the
// requests per interval in each bucket.
func bucketHeatmap(metric string) *prometheus.DataqueryBuilder {
	return q(`sum by (le) (increase(`+metric+`_bucket{{P}}[{R}]))`, "{{le}}").Format(prometheus.PromQueryFormatHeatmap)
}

// modelInfo is one number of the served model's config.json, per model.
func modelInfo(attr string) string {
	return `max by (model) (mlx_model_info{{P}, attr="` + attr + `"})`
}
