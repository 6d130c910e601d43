package dashboards

import (
	"strconv"
	"strings"
)

// Selectors. Every query names its job: the same series name from another
// job must never mix in. $model and $node are multi-value variables (".*"
// for All), so they are only used in regexp matchers.
const (
	selProxy = `job="mlx-proxy", model=~"$model"`
	selHW    = `job="mlx-hw", node=~"$node"`
	selSup   = `job="mlx-supervisor"`
	selKV    = `job="mlx-kv"`
	selLog   = `job="mlx-logtailer"`
	selCol   = `job="mlx-otelcol", node=~"$node"`
	rate     = `$__rate_interval`
)

// Reasons a query may legitimately return nothing on a Linux demo stack.
const (
	macOS       = "macos-only: powermetrics / IOKit / pmset (Apple Silicon)"
	nvidiaOnly  = "nvidia-only: Linux nodes with nvidia-smi"
	sensorOnly  = "sensor-only: needs CPU temperature sensors (Apple Silicon, or Linux hwmon)"
	faultAlerts = "fault-only: no alert is firing"
	faultCrash  = "fault-only: no engine crash yet"
	cfgQueue    = "config-only: exporters with a sending queue (otlp, otlphttp...)"
	cfgKVBytes  = "config-only: mlx_kv_cache_max_bytes exists when prompt_cache_bytes is configured"
	toolsOnly   = "workload-only: requests that offer tools and get tool calls back"
	macOSSysctl = "macos-only: sysctl kern.memorystatus_vm_pressure_level"
	faultSends  = "fault-only: the collector counts failed sends from the first failure"
	faultSpans  = "fault-only: the collector counts failed span exports from the first failure (the stack test has one)"
	hybridOnly  = "model-only: hybrid linear-attention models (Qwen3.5), whose config.json has the linear_* keys; the demo serves Qwen3-4B"
	mtpOnly     = "model-only: models with multi-token prediction layers (mtp_num_hidden_layers in config.json)"
	flagsOnly   = "fault-only: created by the first flagged response"
)

var modelVar = Var{Name: "model", Label: "Model", Query: `label_values(mlx_requests_total{job="mlx-proxy"}, model)`}
var nodeVar = Var{Name: "node", Label: "Node", Query: `label_values(mlx_hw_up{job="mlx-hw"}, node)`}

func fp(v float64) *float64 { return &v }
func ip(v int) *int         { return &v }

func q(expr, legend string) Target { return Target{Expr: sub(expr), Legend: legend} }

// qe is a query that may be empty, and why.
func qe(expr, legend, why string) Target {
	return Target{Expr: sub(expr), Legend: legend, EmptyReason: why}
}

// sub fills {P} {HW} {SUP} {KV} {LOG} {COL} {R} in a query.
func sub(s string) string {
	return strings.NewReplacer(
		"{P}", selProxy, "{HW}", selHW, "{SUP}", selSup, "{KV}", selKV,
		"{LOG}", selLog, "{COL}", selCol, "{R}", rate,
	).Replace(s)
}

func ts(title, unit string, w int, t ...Target) Panel {
	return Panel{Type: "timeseries", Title: title, Unit: unit, W: w, Targets: t}
}

func stat(title, unit string, w int, t ...Target) Panel {
	return Panel{Type: "stat", Title: title, Unit: unit, W: w, Targets: t}
}

func table(title string, w int, t ...Target) Panel {
	for i := range t {
		t[i].Instant = true
	}
	return Panel{Type: "table", Title: title, W: w, Targets: t}
}

func (p Panel) desc(d string) Panel            { p.Description = d; return p }
func (p Panel) min0() Panel                    { p.Min = fp(0); return p }
func (p Panel) ratio() Panel                   { p.Min, p.Max = fp(0), fp(1); return p }
func (p Panel) h(h int) Panel                  { p.H = h; return p }
func (p Panel) stacked() Panel                 { p.Stack = true; return p }
func (p Panel) steps(s ...Step) Panel          { p.Steps = s; return p }
func (p Panel) maps(m map[string]string) Panel { p.Mappings = m; return p }
func (p Panel) as(typ string) Panel            { p.Type = typ; return p }
func (p Panel) dec(n int) Panel                { p.Decimals = ip(n); return p }

// quantiles is one histogram_quantile query per percentile (50, 95,
// 99), legended pN.
func quantiles(metric, sel string, percentiles ...int) []Target {
	var out []Target
	for _, p := range percentiles {
		q := strconv.FormatFloat(float64(p)/100, 'f', -1, 64)
		out = append(out, Target{Expr: sub(`histogram_quantile(` + q + `, sum by (le) (rate(` + metric + `_bucket{` + sel + `}[{R}])))`), Legend: "p" + strconv.Itoa(p)})
	}
	return out
}

var upDown = map[string]string{"0": "down", "1": "up"}
var redGreen = []Step{{"red", 0}, {"green", 1}}

// All returns every dashboard, in file order.
func All() []Dashboard {
	return []Dashboard{
		cluster(), performance(), node(), gpuPower(), httpKinds(),
		tools(), model(), alerts(), sre(), logs(), callTypes(), modelInternals(),
	}
}
