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

func cluster() Dashboard {
	return Dashboard{
		UID: "mlx-cluster", Title: "MLX Cluster Overview", Tags: []string{"mlx", "overview"},
		Description: "The cluster at a glance: serving, inference, quality, cache and hardware.",
		Vars:        []Var{modelVar, nodeVar},
		Rows: []Row{
			{"Summary", []Panel{
				stat("Nodes online", "none", 3, q(`count(up{job="mlx-hw"} == 1) or vector(0)`, "nodes")).steps(redGreen...),
				stat("Engine", "none", 3, q(`max(mlx_server_state{{SUP}})`, "state")).
					maps(map[string]string{"0": "idle", "1": "running", "2": "starting", "3": "backoff"}).
					steps(Step{"red", 0}, Step{"green", 1}, Step{"orange", 2}).
					desc("mlx_server_state: 0 idle, 1 running, 2 starting, 3 backoff."),
				stat("Upstream", "none", 3, q(`min(mlx_up{job="mlx-proxy"})`, "up")).maps(upDown).steps(redGreen...),
				stat("Requests (5m)", "none", 3, q(`sum(increase(mlx_requests_total{{P}}[5m])) or vector(0)`, "requests")),
				stat("Tokens out (5m)", "none", 3, q(`sum(increase(mlx_tokens_completion_total{{P}}[5m])) or vector(0)`, "tokens")),
				stat("TTFT p95 (5m)", "s", 3, q(`histogram_quantile(0.95, sum by (le) (rate(mlx_ttft_seconds_bucket{{P}}[5m])))`, "p95")).
					steps(Step{"green", 0}, Step{"orange", 5}, Step{"red", 10}),
				stat("Error ratio (5m)", "percentunit", 3, q(`(sum(rate(mlx_error_total{{P}}[5m])) or vector(0)) / sum(rate(mlx_requests_total{{P}}[5m]))`, "errors")).
					steps(Step{"green", 0}, Step{"orange", 0.005}, Step{"red", 0.05}),
				stat("Firing alerts", "none", 3, q(`count(ALERTS{alertstate="firing"}) or vector(0)`, "firing")).
					steps(Step{"green", 0}, Step{"orange", 1}, Step{"red", 3}),
			}},
			{"Inference", []Panel{
				ts("Requests / min", "none", 8, q(`sum by (model) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "{{model}}")).min0(),
				ts("Time to first token", "s", 8, quantiles("mlx_ttft_seconds", "{P}", 50, 95)...).min0().
					desc("Streamed completions: arrival at the proxy to the first content chunk."),
				ts("Generation time", "s", 8, quantiles("mlx_generation_seconds", "{P}", 50, 95)...).min0(),
				ts("Tokens / s", "none", 8,
					q(`sum(rate(mlx_tokens_completion_total{{P}}[{R}]))`, "completion"),
					q(`sum(rate(mlx_tokens_prompt_total{{P}}[{R}]))`, "prompt")).min0(),
				ts("Decode speed", "none", 8, quantiles("mlx_token_rate_tokens_per_second", "{P}", 50, 95)...).min0().
					desc("Completion tokens per second of decoding, per request."),
				ts("In flight", "none", 8, q(`sum by (model) (mlx_in_flight{{P}})`, "{{model}}")).min0().
					steps(Step{"green", 0}, Step{"red", 8}),
			}},
			{"Quality", []Panel{
				ts("Hallucination risk (last request)", "none", 8, q(`mlx_hallucination_risk{{P}}`, "{{model}} {{kind}}")).ratio().
					steps(Step{"green", 0}, Step{"orange", 0.5}, Step{"red", 0.8}),
				ts("Heuristics (last request)", "none", 8,
					q(`max by (model) (mlx_heuristic_repetition{{P}})`, "repetition {{model}}"),
					q(`max by (model) (mlx_heuristic_refusal{{P}})`, "refusal {{model}}"),
					q(`max by (model) (mlx_heuristic_hedging{{P}})`, "hedging {{model}}"),
					q(`max by (model) (mlx_heuristic_ungrounded{{P}})`, "ungrounded {{model}}")).ratio(),
				ts("Flagged responses / min", "none", 8, q(`sum by (model) (rate(mlx_hallucination_flag_total{{P}}[{R}])) * 60`, "{{model}}")).min0(),
			}},
			{"Engine cache", []Panel{
				ts("Prompt cache sequences", "none", 8, q(`mlx_kv_cache_sequences{{KV}}`, "{{type}}")).min0(),
				ts("Prompt cache fill", "percentunit", 8, q(`mlx_kv_cache_utilization{{KV}}`, "fill")).min0().
					desc("Against the engine's --prompt-cache-size (and byte limit): at 1 each new request evicts an older sequence."),
				ts("Context window used (last request)", "percentunit", 8, q(`mlx_context_utilization{{P}}`, "{{model}}")).ratio(),
			}},
			{"Hardware", []Panel{
				ts("GPU utilization", "percent", 8, qe(`mlx_hw_gpu_utilization_percent{{HW}}`, "{{node}}", macOS)).min0(),
				ts("Package power", "watt", 8, qe(`mlx_hw_package_power_milliwatts{{HW}} / 1000`, "{{node}}", macOS)).min0(),
				ts("Memory used", "percentunit", 8, q(`mlx_hw_mem_used_bytes{{HW}} / mlx_hw_mem_total_bytes{{HW}}`, "{{node}}")).ratio(),
			}},
			{"At a glance", []Panel{
				stat("Nodes throttling", "none", 4, qe(`count(mlx_hw_thermal_pressure{{HW}} > 0) or vector(0)`, "throttling", macOS)).
					steps(Step{"green", 0}, Step{"orange", 1}),
				stat("Average decode speed (5m)", "none", 4,
					q(`sum(rate(mlx_token_rate_tokens_per_second_sum{{P}}[5m])) / sum(rate(mlx_token_rate_tokens_per_second_count{{P}}[5m]))`, "tok/s")),
				stat("Tool calls (1 h)", "none", 4, q(`sum(increase(mlx_tool_calls_total{{P}}[1h])) or vector(0)`, "calls")),
				stat("Flagged responses (1 h)", "none", 4, q(`sum(increase(mlx_hallucination_flag_total{{P}}[1h])) or vector(0)`, "flagged")).
					steps(Step{"green", 0}, Step{"orange", 1}),
				stat("Exporters up", "none", 4, q(`count(up{job=~"mlx-.*"} == 1) or vector(0)`, "up")),
				stat("Exporters down", "none", 4, q(`count(up{job=~"mlx-.*"} == 0) or vector(0)`, "down")).steps(Step{"green", 0}, Step{"red", 1}),
				ts("Streamed against one-shot", "none", 8, q(`sum by (streaming) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "stream={{streaming}}")).min0().stacked(),
				ts("Sampling temperature (last request)", "none", 8, q(`max by (model, kind) (mlx_temperature{{P}})`, "{{model}} {{kind}}")).min0(),
				ts("Tool calls / min by tool", "none", 8, qe(`sum by (tool) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{tool}}", toolsOnly)).min0().stacked(),
			}},
			{"Per node", []Panel{
				ts("Load (1 min) per CPU", "percentunit", 12, q(`mlx_hw_load1{{HW}} / mlx_hw_cpu_count{{HW}}`, "{{node}}")).min0(),
				ts("Disk used", "percentunit", 12, q(`mlx_hw_disk_used_bytes{{HW}} / mlx_hw_disk_total_bytes{{HW}}`, "{{node}}")).ratio(),
				ts("CPU and ANE power", "watt", 12,
					qe(`mlx_hw_cpu_power_milliwatts{{HW}} / 1000`, "CPU {{node}}", macOS),
					qe(`mlx_hw_ane_power_milliwatts{{HW}} / 1000`, "ANE {{node}}", macOS)).min0(),
				ts("Exporters up by job", "none", 12, q(`up{job=~"mlx-.*"}`, "{{job}} {{node}}")).ratio(),
			}},
		},
	}
}

func performance() Dashboard {
	return Dashboard{
		UID: "mlx-performance", Title: "MLX Performance & Confidence", Tags: []string{"mlx", "performance", "confidence"},
		Description: "Latency, throughput, caching, and the sampler's token-level confidence (logprobs).",
		Vars:        []Var{modelVar},
		Rows: []Row{
			{"Latency", []Panel{
				ts("TTFT percentiles", "s", 12, quantiles("mlx_ttft_seconds", "{P}", 50, 95, 99)...).min0().
					steps(Step{"green", 0}, Step{"red", 10}).desc("SLO: p95 <= 10 s."),
				ts("Queue wait percentiles", "s", 12, quantiles("mlx_queue_wait_seconds", "{P}", 50, 95)...).min0().
					desc("Every completion: arrival at the proxy to the request being sent to the engine (the proxy's own time)."),
				ts("Admission wait percentiles", "s", 12, quantiles("mlx_admission_wait_seconds", "{P}", 50, 95)...).min0().
					desc("Streamed completions: arrival at the proxy to the engine's response headers (the engine admitted the request)."),
				ts("Generation time percentiles", "s", 12, quantiles("mlx_generation_seconds", "{P}", 50, 95, 99)...).min0(),
				ts("Decode speed percentiles", "none", 12, quantiles("mlx_token_rate_tokens_per_second", "{P}", 50, 95)...).min0(),
			}},
			{"Throughput and cache", []Panel{
				ts("Completion tokens / s by kind", "none", 8, q(`sum by (kind) (rate(mlx_tokens_completion_total{{P}}[{R}]))`, "{{kind}}")).min0().stacked(),
				ts("Prompt tokens / s by kind", "none", 8, q(`sum by (kind) (rate(mlx_tokens_prompt_total{{P}}[{R}]))`, "{{kind}}")).min0().stacked(),
				ts("Prompt cache hits", "percentunit", 8,
					q(`sum(rate(mlx_prompt_cached_tokens_total{{P}}[{R}])) / sum(rate(mlx_tokens_prompt_total{{P}}[{R}]))`, "cached share of prompt tokens"),
					q(`max by (model) (mlx_prompt_cache_ratio{{P}})`, "last request {{model}}")).ratio(),
				ts("Context used (last request)", "none", 12,
					q(`mlx_context_used_tokens{{P}}`, "used {{model}}"),
					q(`mlx_context_length_max_tokens{{P}}`, "max {{model}}")).min0(),
				ts("Context window used", "percentunit", 12, q(`mlx_context_utilization{{P}}`, "{{model}}")).ratio(),
			}},
			{"Confidence (logprobs)", []Panel{
				ts("Scoring coverage", "percentunit", 8,
					q(`sum by (model) (rate(mlx_confidence_scored_total{{P}}[{R}])) / sum by (model) (rate(mlx_requests_total{{P}}[{R}]))`, "{{model}}")).ratio().
					desc("Share of completions scored with logprobs: all non-streaming ones, a sample of the streams."),
				ts("Scored / min by source", "none", 8, q(`sum by (source) (rate(mlx_confidence_scored_total{{P}}[{R}])) * 60`, "{{source}}")).min0().stacked(),
				ts("Low-confidence responses / min", "none", 8, q(`sum by (model) (rate(mlx_low_confidence_response_total{{P}}[{R}])) * 60`, "{{model}}")).min0(),
				ts("Token confidence (last scored)", "none", 12,
					q(`max by (model) (mlx_token_confidence_mean{{P}})`, "mean {{model}}"),
					q(`max by (model) (mlx_token_confidence_min{{P}})`, "min {{model}}"),
					q(`max by (model) (mlx_token_confidence_std{{P}})`, "std {{model}}")).ratio().
					steps(Step{"red", 0}, Step{"green", 0.5}),
				ts("Margin and low-confidence tokens (last scored)", "none", 12,
					q(`max by (model) (mlx_token_margin_mean{{P}})`, "top1-top2 margin {{model}}"),
					q(`max by (model) (mlx_low_confidence_token_ratio{{P}})`, "low-confidence token share {{model}}")).ratio().
					steps(Step{"red", 0}, Step{"green", 0.15}),
				ts("Perplexity", "none", 12,
					q(`max by (model) (mlx_output_perplexity{{P}})`, "last {{model}}"),
					q(`histogram_quantile(0.5, sum by (le) (rate(mlx_output_perplexity_histogram_bucket{{P}}[{R}])))`, "p50"),
					q(`histogram_quantile(0.95, sum by (le) (rate(mlx_output_perplexity_histogram_bucket{{P}}[{R}])))`, "p95")).min0().
					steps(Step{"green", 0}, Step{"red", 8}),
				ts("Token entropy", "none", 12,
					q(`max by (model) (mlx_token_entropy_nats{{P}})`, "last {{model}}"),
					q(`histogram_quantile(0.95, sum by (le) (rate(mlx_token_entropy_histogram_bucket{{P}}[{R}])))`, "p95")).min0().
					steps(Step{"green", 0}, Step{"red", 1.5}).desc("Nats, over the returned top-k: a lower bound of the true entropy."),
				ts("Hallucination risk distribution", "none", 12,
					q(`histogram_quantile(0.5, sum by (le) (rate(mlx_hallucination_risk_histogram_bucket{{P}}[{R}])))`, "p50"),
					q(`histogram_quantile(0.95, sum by (le) (rate(mlx_hallucination_risk_histogram_bucket{{P}}[{R}])))`, "p95")).ratio(),
				ts("Sampling temperature", "none", 12, q(`mlx_temperature{{P}}`, "{{model}} {{kind}}")).min0(),
			}},
			{"Judge and heuristics", []Panel{
				ts("Judge scores beside the heuristics", "none", 12,
					q(`sum by (name) (rate(mlx_judge_score_sum{{SUP}}[{R}])) / sum by (name) (rate(mlx_judge_score_count{{SUP}}[{R}]))`, "judge {{name}}"),
					q(`1 - avg(mlx_hallucination_risk{{P}})`, "heuristic quality (1 - risk)"),
					q(`avg(mlx_token_confidence_mean{{P}})`, "token confidence")).ratio().
					desc("The judge's mean scores (the LLM-as-judge loop, receiver/judgereceiver) against the proxy's cheap per-request scores: when they part, one of them is wrong."),
				ts("Judged traces / min by result", "none", 6, q(`sum by (result) (rate(mlx_judge_traces_total{{SUP}}[{R}])) * 60`, "{{result}}")).min0().
					desc("scored, skipped (judged already, or no question and answer), parse_failed, judge_error."),
				ts("Judge pass duration", "s", 6,
					q(`histogram_quantile(0.95, sum by (le) (rate(mlx_judge_pass_seconds_bucket{{SUP}}[{R}])))`, "p95"),
					q(`sum(rate(mlx_judge_passes_total{{SUP}, result!="ok"}[{R}])) / sum(rate(mlx_judge_passes_total{{SUP}}[{R}]))`, "share of passes not ok")).min0(),
			}},
			{"Totals", []Panel{
				stat("Truncated completions (5m)", "none", 6, q(`sum(increase(mlx_finish_reason_total{{P}, reason="length"}[5m])) or vector(0)`, "length")).
					desc("finish_reason length: max_tokens or the context cut the answer."),
				stat("Flagged responses (all time)", "none", 6, q(`sum(mlx_hallucination_flag_total{{P}}) or vector(0)`, "flagged")),
				stat("Current risk (last request)", "none", 6, q(`max(mlx_hallucination_risk{{P}})`, "risk")).ratio().
					steps(Step{"green", 0}, Step{"orange", 0.5}, Step{"red", 0.8}),
				stat("Completions scored (24 h)", "none", 6, q(`sum(increase(mlx_confidence_scored_total{{P}}[24h])) or vector(0)`, "scored")),
			}},
		},
	}
}

func node() Dashboard {
	return Dashboard{
		UID: "mlx-node", Title: "MLX Node Hardware", Tags: []string{"mlx", "hardware"},
		Description: "Each Mac of the ring: CPU, memory, disk, processes and the ring's network.",
		Vars:        []Var{nodeVar},
		Rows: []Row{
			{"Status", []Panel{
				stat("Exporter", "none", 4, q(`up{job="mlx-hw", node=~"$node"}`, "{{node}}")).maps(upDown).steps(redGreen...),
				stat("Uptime", "s", 4, q(`mlx_hw_uptime_seconds{{HW}}`, "{{node}}")),
				stat("Logical CPUs", "none", 4, q(`mlx_hw_cpu_count{{HW}}`, "{{node}}")),
				stat("Physical memory", "bytes", 4, q(`mlx_hw_mem_total_bytes{{HW}}`, "{{node}}")),
				table("Telemetry sources", 8, q(`mlx_hw_source_up{{HW}}`, "")).h(4).
					desc("1 if the source (powermetrics, vm_stat, ioreg, ...) worked at the last scrape."),
			}},
			{"CPU and memory", []Panel{
				ts("Load", "none", 12,
					q(`mlx_hw_load1{{HW}}`, "load1 {{node}}"),
					q(`mlx_hw_load5{{HW}}`, "load5 {{node}}"),
					q(`mlx_hw_load15{{HW}}`, "load15 {{node}}"),
					q(`mlx_hw_cpu_count{{HW}}`, "CPUs {{node}}")).min0(),
				ts("Memory", "bytes", 12,
					q(`mlx_hw_mem_used_bytes{{HW}}`, "used {{node}}"),
					q(`mlx_hw_mem_total_bytes{{HW}}`, "total {{node}}"),
					q(`mlx_hw_mem_available_bytes{{HW}}`, "available {{node}}"),
					q(`mlx_hw_swap_used_bytes{{HW}}`, "swap used {{node}}")).min0(),
				ts("Free pages (mlx_hw_mem_pressure)", "none", 12, q(`mlx_hw_mem_pressure{{HW}}`, "{{node}}")).min0().
					steps(Step{"red", 0}, Step{"green", 20000}).
					desc("The original's unit: a page count (16 KiB pages on Apple Silicon). MLXMemoryPressureHigh fires under 20000."),
				ts("Kernel memory pressure level", "none", 12, qe(`mlx_hw_mem_pressure_level{{HW}}`, "{{node}}", macOSSysctl)).min0().
					maps(map[string]string{"1": "normal", "2": "warn", "4": "critical"}).
					steps(Step{"green", 0}, Step{"orange", 2}, Step{"red", 4}),
				ts("Disk used", "percentunit", 12, q(`mlx_hw_disk_used_bytes{{HW}} / mlx_hw_disk_total_bytes{{HW}}`, "{{node}}")).ratio().
					steps(Step{"green", 0}, Step{"red", 0.9}),
				ts("CPU temperature", "celsius", 12, qe(`mlx_hw_cpu_temp_celsius{{HW}}`, "{{node}}", sensorOnly)),
			}},
			{"Processes", []Panel{
				ts("mlx_lm.server CPU", "percent", 12, q(`mlx_worker_cpu_percent{{HW}}`, "{{node}}")).min0().
					desc("Percent of one core."),
				ts("mlx_lm.server memory", "bytes", 12, q(`mlx_worker_rss_bytes{{HW}}`, "{{node}}")).min0(),
				ts("Component CPU", "percent", 12, q(`mlx_proc_cpu_percent{{HW}}`, "{{component}} {{node}}")).min0(),
				ts("Component memory", "bytes", 12, q(`mlx_proc_rss_bytes{{HW}}`, "{{component}} {{node}}")).min0(),
			}},
			{"Network (ring interfaces)", []Panel{
				ts("Ring traffic", "Bps", 12,
					q(`rate(mlx_net_rx_bytes_total{{HW}}[{R}])`, "rx {{iface}} {{node}}"),
					q(`rate(mlx_net_tx_bytes_total{{HW}}[{R}])`, "tx {{iface}} {{node}}")).min0().
					desc("macOS: the Thunderbolt bridge members and ports (or ring_interfaces); Linux: every interface but lo."),
				ts("Ring errors", "none", 12,
					q(`rate(mlx_net_rx_errors_total{{HW}}[{R}])`, "rx {{iface}} {{node}}"),
					q(`rate(mlx_net_tx_errors_total{{HW}}[{R}])`, "tx {{iface}} {{node}}")).min0(),
			}},
			{"LLM on this node", []Panel{
				ts("Requests / min", "none", 8, q(`sum by (node) (rate(mlx_requests_total{job="mlx-proxy", node=~"$node"}[{R}])) * 60`, "{{node}}")).min0().
					desc("The proxy runs on rank 0: other nodes serve through the ring and show nothing here."),
				ts("Engine state", "none", 8, q(`max by (node) (mlx_server_state{job="mlx-supervisor", node=~"$node"})`, "{{node}}")).
					maps(map[string]string{"0": "idle", "1": "running", "2": "starting", "3": "backoff"}),
				ts("Engine restarts / h", "none", 8, q(`(sum by (node) (increase(mlx_server_restarts_total{job="mlx-supervisor", node=~"$node"}[1h]))) or vector(0)`, "{{node}}")).min0(),
				table("Node info", 12,
					q(`mlx_hw_cpu_count{{HW}}`, ""),
					q(`mlx_hw_mem_total_bytes{{HW}}`, "")).h(6),
				stat("Active alerts on this node", "none", 12, q(`count(ALERTS{alertstate="firing", node=~"$node"}) or vector(0)`, "firing")).
					steps(Step{"green", 0}, Step{"orange", 1}, Step{"red", 3}),
			}},
			{"GPU and power", []Panel{
				ts("GPU utilization", "percent", 8, qe(`mlx_hw_gpu_utilization_percent{{HW}}`, "{{node}}", macOS)).min0(),
				ts("GPU memory used", "bytes", 8, qe(`mlx_hw_gpu_mem_used_bytes{{HW}}`, "{{node}}", macOS)).min0(),
				ts("Package power", "watt", 8, qe(`mlx_hw_package_power_milliwatts{{HW}} / 1000`, "{{node}}", macOS)).min0(),
			}},
		},
	}
}

func gpuPower() Dashboard {
	return Dashboard{
		UID: "mlx-gpu-power", Title: "MLX GPU & Power", Tags: []string{"mlx", "gpu", "power"},
		Description: "Apple GPU activity, unified memory, power and thermal pressure (powermetrics, IOKit), and NVIDIA GPUs on Linux nodes.",
		Vars:        []Var{nodeVar},
		Rows: []Row{
			{"GPU", []Panel{
				ts("GPU active residency", "percent", 12, qe(`mlx_hw_gpu_utilization_percent{{HW}}`, "{{node}}", macOS)).min0().
					steps(Step{"green", 0}, Step{"red", 95}),
				ts("GPU device utilization (IOKit)", "percent", 12, qe(`mlx_hw_gpu_iokit_util_percent{{HW}}`, "{{node}}", macOS)).min0(),
				ts("GPU frequency", "rotmhz", 12, qe(`mlx_hw_gpu_frequency_mhz{{HW}}`, "{{node}}", macOS)).min0(),
				ts("GPU memory", "bytes", 12,
					qe(`mlx_hw_gpu_mem_used_bytes{{HW}}`, "in use {{node}}", macOS),
					qe(`mlx_hw_gpu_mem_alloc_bytes{{HW}}`, "allocated {{node}}", macOS),
					qe(`mlx_hw_gpu_mem_total_bytes{{HW}}`, "unified pool {{node}}", macOS)).min0(),
				ts("GPU allocation of the unified pool", "percentunit", 12, qe(`mlx_hw_gpu_mem_alloc_bytes{{HW}} / mlx_hw_gpu_mem_total_bytes{{HW}}`, "{{node}}", macOS)).ratio().
					steps(Step{"green", 0}, Step{"red", 0.9}),
				ts("GPU temperature", "celsius", 12, qe(`mlx_hw_gpu_temp_celsius{{HW}}`, "{{node}}", macOS)),
			}},
			{"Power and thermal", []Panel{
				ts("Power by unit", "watt", 12,
					qe(`mlx_hw_gpu_power_milliwatts{{HW}} / 1000`, "GPU {{node}}", macOS),
					qe(`mlx_hw_cpu_power_milliwatts{{HW}} / 1000`, "CPU {{node}}", macOS),
					qe(`mlx_hw_ane_power_milliwatts{{HW}} / 1000`, "ANE {{node}}", macOS)).min0().stacked(),
				ts("Package power", "watt", 12, qe(`mlx_hw_package_power_milliwatts{{HW}} / 1000`, "{{node}}", macOS)).min0().
					steps(Step{"green", 0}, Step{"red", 30}),
				ts("Thermal pressure", "none", 12, qe(`mlx_hw_thermal_pressure{{HW}}`, "{{node}}", macOS)).ratio().
					steps(Step{"green", 0}, Step{"orange", 0.25}, Step{"red", 0.6}).
					desc("macOS thermal pressure level / 4: 0.25 moderate, 0.5 heavy, 0.75 trapping."),
				ts("Energy per completion token", "joule", 12,
					qe(`sum(mlx_hw_package_power_milliwatts{job="mlx-hw"}) / 1000 / sum(rate(mlx_tokens_completion_total{job="mlx-proxy"}[{R}]))`, "J / token", macOS)).min0().
					desc("Package power of every node over the cluster's completion tokens per second."),
				ts("Thermal pressure level", "none", 12, qe(`mlx_hw_thermal_pressure_level{{HW}}`, "{{node}}", macOS)).min0().
					maps(map[string]string{"0": "nominal", "1": "moderate", "2": "heavy", "3": "trapping", "4": "sleeping"}),
			}},
			{"NVIDIA GPUs (Linux nodes)", []Panel{
				ts("NVIDIA utilization", "percentunit", 12, qe(`mlx_hw_nvidia_gpu_utilization_ratio{{HW}}`, "gpu {{gpu}} {{node}}", nvidiaOnly)).ratio(),
				ts("NVIDIA memory", "bytes", 12,
					qe(`mlx_hw_nvidia_gpu_memory_used_bytes{{HW}}`, "used gpu {{gpu}} {{node}}", nvidiaOnly),
					qe(`mlx_hw_nvidia_gpu_memory_total_bytes{{HW}}`, "total gpu {{gpu}} {{node}}", nvidiaOnly)).min0(),
				ts("NVIDIA power", "watt", 12, qe(`mlx_hw_nvidia_gpu_power_watts{{HW}}`, "gpu {{gpu}} {{node}}", nvidiaOnly)).min0(),
				ts("NVIDIA temperature", "celsius", 12, qe(`mlx_hw_nvidia_gpu_temp_celsius{{HW}}`, "gpu {{gpu}} {{node}}", nvidiaOnly)),
			}},
			{"Fleet", []Panel{
				stat("Nodes online", "none", 8, q(`count(up{job="mlx-hw"} == 1) or vector(0)`, "nodes")).steps(redGreen...),
				stat("Total GPU memory", "bytes", 8, qe(`sum(mlx_hw_gpu_mem_total_bytes{{HW}})`, "total", macOS)),
				stat("Active GPU, power and thermal alerts", "none", 8,
					q(`count(ALERTS{alertstate="firing", category=~"gpu|power|thermal"}) or vector(0)`, "firing")).steps(Step{"green", 0}, Step{"red", 1}),
			}},
		},
	}
}

func httpKinds() Dashboard {
	return Dashboard{
		UID: "mlx-http", Title: "MLX HTTP & Call Kinds", Tags: []string{"mlx", "http"},
		Description: "Requests, outcomes and finish reasons, split by streaming and by call kind (chat / reasoning).",
		Vars:        []Var{modelVar},
		Rows: []Row{
			{"Traffic", []Panel{
				ts("Requests / min by streaming", "none", 8, q(`sum by (streaming) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "streaming={{streaming}}")).min0().stacked(),
				ts("Requests / min by kind", "none", 8, q(`sum by (kind) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "{{kind}}")).min0().stacked(),
				ts("In flight", "none", 8, q(`sum by (model) (mlx_in_flight{{P}})`, "{{model}}")).min0(),
			}},
			{"Outcomes", []Panel{
				ts("Errors / min by status", "none", 8, q(`sum by (status) (rate(mlx_error_total{{P}}[{R}])) * 60`, "{{status}}")).min0(),
				ts("Errors / min by kind", "none", 8, q(`sum by (kind) (rate(mlx_error_total{{P}}[{R}])) * 60`, "{{kind}}")).min0(),
				ts("Error ratio", "percentunit", 8,
					q(`(sum(rate(mlx_error_total{{P}}[{R}])) or vector(0)) / sum(rate(mlx_requests_total{{P}}[{R}]))`, "4xx+5xx"),
					q(`(sum(rate(mlx_error_total{{P}, status="5xx"}[{R}])) or vector(0)) / sum(rate(mlx_requests_total{{P}}[{R}]))`, "5xx")).min0(),
				ts("Finish reasons / min", "none", 12, q(`sum by (reason) (rate(mlx_finish_reason_total{{P}}[{R}])) * 60`, "{{reason}}")).min0().stacked(),
				ts("Truncated share (finish_reason=length)", "percentunit", 12,
					q(`(sum(rate(mlx_finish_reason_total{{P}, reason="length"}[{R}])) or vector(0)) / sum(rate(mlx_finish_reason_total{{P}}[{R}]))`, "length")).ratio().
					steps(Step{"green", 0}, Step{"red", 0.2}).desc("MLXResponsesTruncated fires above 20% over 15 minutes."),
			}},
			{"Call kinds", []Panel{
				ts("Completion tokens / s by kind", "none", 12, q(`sum by (kind) (rate(mlx_tokens_completion_total{{P}}[{R}]))`, "{{kind}}")).min0(),
				ts("Prompt tokens / s by kind", "none", 12, q(`sum by (kind) (rate(mlx_tokens_prompt_total{{P}}[{R}]))`, "{{kind}}")).min0(),
				ts("Cached prompt tokens / s by kind", "none", 12, q(`sum by (kind) (rate(mlx_prompt_cached_tokens_total{{P}}[{R}]))`, "{{kind}}")).min0(),
				ts("Hallucination risk by kind (last request)", "none", 12, q(`max by (kind) (mlx_hallucination_risk{{P}})`, "{{kind}}")).ratio(),
				ts("Temperature by kind (last request)", "none", 12, q(`max by (kind) (mlx_temperature{{P}})`, "{{kind}}")).min0(),
				ts("Tool calls / min by kind", "none", 12, qe(`sum by (kind) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{kind}}", toolsOnly)).min0(),
			}},
			{"Totals", []Panel{
				stat("Requests (24 h)", "none", 6, q(`sum(increase(mlx_requests_total{{P}}[24h])) or vector(0)`, "requests")),
				stat("Upstream reachable (1 h)", "percentunit", 6, q(`avg_over_time(min(mlx_up{job="mlx-proxy"})[1h:1m])`, "reachable")).ratio().
					steps(Step{"red", 0}, Step{"orange", 0.99}, Step{"green", 0.999}),
				stat("Tokens / request", "none", 6,
					q(`sum(rate(mlx_tokens_completion_total{{P}}[{R}])) / clamp_min(sum(rate(mlx_requests_total{{P}}[{R}])), 0.0001)`, "completion")),
				stat("Flags / min", "none", 6, q(`(sum(rate(mlx_hallucination_flag_total{{P}}[{R}])) * 60) or vector(0)`, "flags")),
			}},
		},
	}
}

func tools() Dashboard {
	return Dashboard{
		UID: "mlx-tools", Title: "MLX Tool Calls", Tags: []string{"mlx", "tools"},
		Description: "Which tools the model calls, how often, and answers given without one.",
		Vars:        []Var{modelVar},
		Rows: []Row{
			{"Calls", []Panel{
				ts("Tool calls / min by tool", "none", 12, qe(`sum by (tool) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{tool}}", toolsOnly)).min0().stacked(),
				ts("Tool calls / min by type", "none", 12, qe(`sum by (type) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{type}}", toolsOnly)).min0().stacked(),
				table("Top tools (24 h)", 12, qe(`topk(10, sum by (tool, type) (increase(mlx_tool_calls_total{{P}}[24h])))`, "", toolsOnly)),
				ts("Completions ending in tool calls", "percentunit", 12,
					q(`(sum(rate(mlx_finish_reason_total{{P}, reason="tool_calls"}[{R}])) or vector(0)) / sum(rate(mlx_finish_reason_total{{P}}[{R}]))`, "tool_calls share")).ratio(),
			}},
			{"Grounding", []Panel{
				ts("Ungrounded heuristic (last request)", "none", 12, q(`max by (model) (mlx_heuristic_ungrounded{{P}})`, "{{model}}")).ratio().
					desc("1 when a factual-looking answer came back without any tool call although tools were offered."),
				ts("Tool calls per completion", "none", 12,
					qe(`sum(rate(mlx_tool_calls_total{{P}}[{R}])) / sum(rate(mlx_requests_total{{P}}[{R}]))`, "calls / completion", toolsOnly)).min0(),
			}},
			{"Totals", []Panel{
				stat("Tool calls (30 d)", "none", 6, q(`sum(increase(mlx_tool_calls_total{{P}}[30d])) or vector(0)`, "calls")),
				stat("Distinct tools (30 d)", "none", 6, q(`count(sum by (tool) (increase(mlx_tool_calls_total{{P}}[30d])) > 0) or vector(0)`, "tools")),
				stat("Tools active (7 d)", "none", 6, q(`count(sum by (tool) (increase(mlx_tool_calls_total{{P}}[7d])) > 0) or vector(0)`, "tools")),
				stat("Tools active (24 h)", "none", 6, q(`count(sum by (tool) (increase(mlx_tool_calls_total{{P}}[24h])) > 0) or vector(0)`, "tools")),
				Panel{Type: "bargauge", Title: "Share of calls by tool (24 h)", Unit: "percentunit", W: 24, H: 6, Targets: []Target{
					qe(`sum by (tool) (increase(mlx_tool_calls_total{{P}}[24h])) / scalar(sum(increase(mlx_tool_calls_total{{P}}[24h])))`, "{{tool}}", toolsOnly)}},
			}},
		},
	}
}

func model() Dashboard {
	return Dashboard{
		UID: "mlx-model", Title: "MLX Model Architecture", Tags: []string{"mlx", "model"},
		Description: "The served model's configuration (config.json), its context and KV-cache budget, and the engine's prompt cache.",
		Vars:        []Var{modelVar},
		From:        "now-6h",
		Rows: []Row{
			{"Model", []Panel{
				table("Architecture", 12, q(`mlx_model_arch{{P}}`, "")).h(5),
				table("Configuration", 12, q(`mlx_model_info{{P}}`, "")).h(10),
				stat("Layers", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="layer_count"})`, "{{model}}")),
				stat("KV heads", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="kv_heads"})`, "{{model}}")),
				stat("Head dim", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="head_dim"})`, "{{model}}")),
				stat("Hidden size", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="hidden_size"})`, "{{model}}")),
				stat("Quantization bits", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="quant_bits"})`, "{{model}}")),
				stat("Vocabulary", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="vocab_size"})`, "{{model}}")),
			}},
			{"Context and KV budget", []Panel{
				stat("Max context", "none", 6, q(`max by (model) (mlx_context_length_max_tokens{{P}})`, "{{model}}")),
				stat("KV bytes / token", "bytes", 6, q(`max by (model) (mlx_kv_bytes_per_token{{P}})`, "{{model}}")),
				stat("KV bytes of a full context", "bytes", 6, q(`max(mlx_kv_est_bytes_max_context{{KV}})`, "full context")),
				stat("Model loaded", "none", 6, q(`max by (model) (mlx_model_loaded{{SUP}})`, "{{model}}")).maps(map[string]string{"0": "no", "1": "yes"}).steps(redGreen...),
			}},
			{"Prompt cache", []Panel{
				ts("Cache bytes by type", "bytes", 12,
					q(`mlx_kv_cache_bytes{{KV}}`, "{{type}}"),
					qe(`mlx_kv_cache_max_bytes{{KV}}`, "limit", cfgKVBytes)).min0(),
				ts("Cache sequences and limit", "none", 12,
					q(`mlx_kv_cache_sequences{{KV}, type="total"}`, "sequences"),
					q(`mlx_kv_cache_max_sequences{{KV}}`, "limit (--prompt-cache-size)")).min0(),
				ts("Cache fill", "percentunit", 12, q(`mlx_kv_cache_utilization{{KV}}`, "fill")).min0().
					steps(Step{"green", 0}, Step{"orange", 0.9}, Step{"red", 1}),
				ts("Time since the engine last logged its cache", "s", 12,
					q(`mlx_kv_cache_state_age_seconds{{KV}}`, "age"),
					q(`mlx_kv_agent_up{{KV}}`, "log readable")).min0().
					desc("The engine logs its cache at every admitted request: this is also the time since the last request."),
			}},
			{"Serving", []Panel{
				stat("Engine uptime", "s", 6, q(`max(mlx_server_uptime_seconds{{SUP}})`, "uptime")),
				stat("Restarts (24 h)", "none", 6, q(`sum(increase(mlx_server_restarts_total{{SUP}}[24h])) or vector(0)`, "restarts")),
				table("Last crash reason", 6, qe(`mlx_server_last_crash_reason{{SUP}} == 1`, "", faultCrash)),
				stat("Scoring coverage", "percentunit", 6,
					q(`sum(rate(mlx_confidence_scored_total{{P}}[{R}])) / clamp_min(sum(rate(mlx_requests_total{{P}}[{R}])), 0.0001)`, "scored")).ratio(),
			}},
		},
	}
}

func alerts() Dashboard {
	return Dashboard{
		UID: "mlx-alerts", Title: "MLX Alerts & Serving Health", Tags: []string{"mlx", "alerts", "serving"},
		Description: "What is firing, the engine as the supervisor sees it, crashes, probes, and every scrape target.",
		Rows: []Row{
			{"Alerts", []Panel{
				stat("Firing", "none", 4, q(`count(ALERTS{alertstate="firing"}) or vector(0)`, "firing")).
					steps(Step{"green", 0}, Step{"orange", 1}, Step{"red", 3}),
				stat("Pending", "none", 4, q(`count(ALERTS{alertstate="pending"}) or vector(0)`, "pending")).
					steps(Step{"green", 0}, Step{"orange", 1}),
				Panel{Type: "bargauge", Title: "Firing by severity", W: 16, H: 4,
					Targets: []Target{qe(`sum by (severity) (ALERTS{alertstate="firing"})`, "{{severity}}", faultAlerts)}},
				table("Firing alerts", 24, qe(`ALERTS{alertstate="firing"}`, "", faultAlerts)).h(7),
			}},
			{"Engine", []Panel{
				stat("Process / ready / model", "none", 6,
					q(`max(mlx_server_up{{SUP}})`, "process"),
					q(`max(mlx_server_ready{{SUP}})`, "ready"),
					q(`max(mlx_model_loaded{{SUP}})`, "model")).maps(upDown).steps(redGreen...),
				stat("Engine uptime", "s", 6, q(`max(mlx_server_uptime_seconds{{SUP}})`, "uptime")),
				stat("Restarts (1 h)", "none", 6, q(`sum(increase(mlx_server_restarts_total{{SUP}}[1h]))`, "restarts")).
					steps(Step{"green", 0}, Step{"orange", 1}, Step{"red", 4}),
				stat("Last exit code", "none", 6, q(`max(mlx_server_last_exit_code{{SUP}})`, "exit code")).
					desc("Minus the signal number when a signal ended the engine; -1 when it could not be started."),
				ts("Engine state", "none", 12,
					q(`max(mlx_server_state{{SUP}})`, "state"),
					q(`max(mlx_server_backoff_seconds{{SUP}})`, "backoff (s)")).min0().
					desc("State: 0 idle, 1 running, 2 starting, 3 backoff."),
				ts("Readiness probes / min", "none", 12, q(`sum by (result) (rate(mlx_server_health_checks_total{{SUP}}[{R}])) * 60`, "{{result}}")).min0().stacked(),
			}},
			{"Crashes", []Panel{
				Panel{Type: "bargauge", Title: "Crashes by reason (24 h)", W: 12,
					Targets: []Target{q(`sum by (reason) (increase(mlx_server_crashes_total{{SUP}}[24h]))`, "{{reason}}")}},
				table("Last crash reason", 12, qe(`mlx_server_last_crash_reason{{SUP}} == 1`, "", faultCrash)),
			}},
			{"Scrape targets", []Panel{
				stat("Targets down", "none", 4, q(`count(up == 0) or vector(0)`, "down")).
					steps(Step{"green", 0}, Step{"red", 1}),
				table("Targets", 20, q(`up`, "")).h(8),
				ts("Scrape duration by job", "s", 24, q(`max by (job) (scrape_duration_seconds)`, "{{job}}")).min0(),
			}},
			{"Alert history", []Panel{
				ts("Alerts firing in the last hour", "none", 8, qe(`count by (alertname) (count_over_time(ALERTS{alertstate="firing"}[1h]))`, "{{alertname}}", faultAlerts)).min0(),
				ts("Flapping alerts (3+ starts in 1 h)", "none", 8, qe(`count by (alertname) (changes(ALERTS_FOR_STATE[1h]) >= 3)`, "{{alertname}}", faultAlerts)).min0().
					desc("ALERTS_FOR_STATE holds the time an alert became active: each change is a new start."),
				ts("Restarts and crashes / h", "none", 8,
					q(`sum(increase(mlx_server_restarts_total{{SUP}}[1h])) or vector(0)`, "restarts"),
					q(`sum(increase(mlx_server_crashes_total{{SUP}}[1h])) or vector(0)`, "crashes")).min0(),
			}},
		},
	}
}

const sloContract = `### SLO contract

| SLI | Good event | SLO | Budget | Window |
|---|---|---|---|---|
| **Availability** | a chat completion that is **not 5xx** (4xx are client errors) | **99.5 %** | 0.5 % | 30 d |
| **Latency** | a first token within **10 s** (streamed completions) | **p95 <= 10 s** | 5 % slower | 30 d |

Burn rate = observed bad share / budget; 1x spends the budget exactly in 30 days.
Alerts (rules/mlx-slo.yml): **14.4x over 1 h and 5 m** pages (2 % of the budget in an hour),
**3x over 6 h and 30 m** warns (10 % in 6 hours), and **MLXErrorBudgetExhausted** once the
30-day bad share exceeds the budget. The ratios are vmalert recording rules (mlx:slo_*).`

func sre() Dashboard {
	return Dashboard{
		UID: "mlx-sre", Title: "MLX SRE - SLOs & Error Budget", Tags: []string{"mlx", "sre", "slo"},
		Description: "Availability and TTFT SLOs over 30 days, their error budgets and burn rates.",
		From:        "now-24h",
		Rows: []Row{
			{"Contract", []Panel{
				{Type: "text", Title: "SLO contract", W: 24, H: 7, Content: sloContract},
			}},
			{"Status (30 d)", []Panel{
				Panel{Type: "gauge", Title: "Availability SLI", Unit: "percentunit", W: 6, H: 6, Min: fp(0.99), Max: fp(1), Decimals: ip(2),
					Steps:   []Step{{"red", 0}, {"orange", 0.99}, {"green", 0.995}},
					Targets: []Target{q(`1 - mlx:slo_availability_error_ratio:rate30d`, "availability")}},
				Panel{Type: "gauge", Title: "Availability budget left", Unit: "percentunit", W: 6, H: 6, Min: fp(0), Max: fp(1),
					Steps:   []Step{{"red", 0}, {"orange", 0.25}, {"green", 0.5}},
					Targets: []Target{q(`1 - mlx:slo_availability_error_ratio:rate30d / 0.005`, "budget left")}},
				Panel{Type: "gauge", Title: "Latency SLI (TTFT <= 10 s)", Unit: "percentunit", W: 6, H: 6, Min: fp(0.9), Max: fp(1), Decimals: ip(2),
					Steps:   []Step{{"red", 0}, {"orange", 0.9}, {"green", 0.95}},
					Targets: []Target{q(`1 - mlx:slo_ttft_slow_ratio:rate30d`, "latency")}},
				Panel{Type: "gauge", Title: "Latency budget left", Unit: "percentunit", W: 6, H: 6, Min: fp(0), Max: fp(1),
					Steps:   []Step{{"red", 0}, {"orange", 0.25}, {"green", 0.5}},
					Targets: []Target{q(`1 - mlx:slo_ttft_slow_ratio:rate30d / 0.05`, "budget left")}},
			}},
			{"Burn rates (1x = the budget lasts 30 days)", []Panel{
				ts("Availability burn rate", "none", 12,
					q(`mlx:slo_availability_error_ratio:rate5m / 0.005`, "5m"),
					q(`mlx:slo_availability_error_ratio:rate30m / 0.005`, "30m"),
					q(`mlx:slo_availability_error_ratio:rate1h / 0.005`, "1h"),
					q(`mlx:slo_availability_error_ratio:rate6h / 0.005`, "6h")).min0().
					steps(Step{"green", 0}, Step{"orange", 3}, Step{"red", 14.4}),
				ts("Latency burn rate", "none", 12,
					q(`mlx:slo_ttft_slow_ratio:rate5m / 0.05`, "5m"),
					q(`mlx:slo_ttft_slow_ratio:rate30m / 0.05`, "30m"),
					q(`mlx:slo_ttft_slow_ratio:rate1h / 0.05`, "1h"),
					q(`mlx:slo_ttft_slow_ratio:rate6h / 0.05`, "6h")).min0().
					steps(Step{"green", 0}, Step{"orange", 3}, Step{"red", 14.4}),
			}},
			{"Volume (30 d)", []Panel{
				stat("Requests", "none", 6, q(`sum(increase(mlx_requests_total{job="mlx-proxy"}[30d]))`, "requests")).dec(0),
				stat("5xx", "none", 6, q(`sum(increase(mlx_error_total{job="mlx-proxy", status="5xx"}[30d]))`, "5xx")).dec(0),
				stat("4xx", "none", 6, q(`sum(increase(mlx_error_total{job="mlx-proxy", status="4xx"}[30d]))`, "4xx")).dec(0),
				stat("SLO alerts firing", "none", 6, q(`count(ALERTS{alertstate="firing", category="slo"}) or vector(0)`, "firing")).
					steps(Step{"green", 0}, Step{"red", 1}),
			}},
			{"Trends", []Panel{
				ts("5xx ratio", "percentunit", 12,
					q(`(sum(rate(mlx_error_total{job="mlx-proxy", status="5xx"}[5m])) or vector(0)) / sum(rate(mlx_requests_total{job="mlx-proxy"}[5m]))`, "5m")).min0().
					steps(Step{"green", 0}, Step{"red", 0.005}),
				ts("TTFT p95 against the SLO", "s", 12,
					q(`histogram_quantile(0.95, sum by (le) (rate(mlx_ttft_seconds_bucket{job="mlx-proxy"}[30m])))`, "p95 (30m)")).min0().
					steps(Step{"green", 0}, Step{"red", 10}),
			}},
		},
	}
}

func logs() Dashboard {
	return Dashboard{
		UID: "mlx-logs", Title: "MLX Log Pipeline", Tags: []string{"mlx", "logs"},
		Description: "server.log through the file_log pipeline (:9106 health series) and the collector's own pipeline telemetry (:8888).",
		Vars:        []Var{nodeVar},
		Rows: []Row{
			{"Lines", []Panel{
				ts("Lines / min by severity", "none", 8, q(`sum by (severity) (rate(mlx_log_tailer_lines_total{{LOG}}[{R}])) * 60`, "{{severity}}")).min0().stacked(),
				ts("Lines / min by category", "none", 8, q(`sum by (category) (rate(mlx_log_tailer_lines_total{{LOG}}[{R}])) * 60`, "{{category}}")).min0().stacked(),
				ts("Shipped / min by sink", "none", 8, q(`sum by (sink) (rate(mlx_log_tailer_shipped_total{{LOG}}[{R}])) * 60`, "{{sink}}")).min0().
					desc("Records each destination accepted (the JSONL file, OTLP/HTTP); every record goes to each sink."),
			}},
			{"Pipeline health", []Panel{
				stat("Pipeline", "none", 4, q(`max(mlx_log_tailer_up{{LOG}})`, "up")).maps(upDown).steps(redGreen...),
				stat("Queued in sinks", "none", 4, q(`sum by (sink) (mlx_log_tailer_queue_depth{{LOG}})`, "{{sink}}")),
				stat("server.log size", "bytes", 4, q(`max(mlx_log_tailer_file_bytes{{LOG}})`, "bytes")),
				stat("Failed exports (1 h)", "none", 4, q(`sum(increase(mlx_log_tailer_errors_total{{LOG}}[1h]))`, "attempts")).
					steps(Step{"green", 0}, Step{"red", 1}),
				ts("Dropped / min by reason", "none", 8, q(`sum by (reason, sink) (rate(mlx_log_tailer_dropped_total{{LOG}}[{R}])) * 60`, "{{reason}} {{sink}}")).min0().stacked().
					desc("http_filter is by design (the access log); queue_full and export_failed are data lost."),
			}},
			{"Collector", []Panel{
				ts("Log records received / s", "none", 8,
					q(`sum by (receiver) (rate(otelcol_receiver_accepted_log_records{{COL}}[{R}]))`, "accepted {{receiver}}"),
					q(`sum by (receiver) (rate(otelcol_receiver_refused_log_records{{COL}}[{R}]))`, "refused {{receiver}}")).min0(),
				ts("Log records exported / s", "none", 8,
					q(`sum by (exporter) (rate(otelcol_exporter_sent_log_records{{COL}}[{R}]))`, "sent {{exporter}}"),
					qe(`sum by (exporter) (rate(otelcol_exporter_send_failed_log_records{{COL}}[{R}]))`, "failed {{exporter}}", faultSends)).min0(),
				ts("Exporter queue fill", "percentunit", 8,
					qe(`max by (exporter, data_type) (otelcol_exporter_queue_size{{COL}} / (otelcol_exporter_queue_capacity{{COL}} > 0))`, "{{exporter}} {{data_type}}", cfgQueue)).ratio().
					steps(Step{"green", 0}, Step{"red", 0.8}),
				ts("Spans exported / s", "none", 8,
					q(`sum by (exporter) (rate(otelcol_exporter_sent_spans{{COL}}[{R}]))`, "sent {{exporter}}"),
					qe(`sum by (exporter) (rate(otelcol_exporter_send_failed_spans{{COL}}[{R}]))`, "failed {{exporter}}", faultSpans)).min0(),
				ts("Proxy telemetry dropped / s", "none", 8,
					q(`sum by (node) (rate(mlx_spans_dropped_total{job="mlx-proxy"}[{R}]))`, "spans {{node}}"),
					q(`sum by (node) (rate(mlx_access_log_dropped_total{job="mlx-proxy"}[{R}]))`, "access log {{node}}")).min0(),
				ts("Collector memory", "bytes", 8,
					q(`otelcol_process_memory_rss{{COL}}`, "rss {{node}}"),
					q(`otelcol_process_runtime_heap_alloc_bytes{{COL}}`, "heap {{node}}")).min0(),
				ts("Collector CPU", "percentunit", 8, q(`rate(otelcol_process_cpu_seconds{{COL}}[{R}])`, "{{node}}")).min0().
					desc("Cores used by mlx-otelcol."),
			}},
			{"The engine", []Panel{
				ts("mlx_lm.server CPU", "percent", 8, q(`mlx_worker_cpu_percent{job="mlx-hw"}`, "{{node}}")).min0(),
				ts("mlx_lm.server memory", "bytes", 8, q(`mlx_worker_rss_bytes{job="mlx-hw"}`, "{{node}}")).min0(),
				ts("Engine state", "none", 8, q(`max(mlx_server_state{{SUP}})`, "state")).
					maps(map[string]string{"0": "idle", "1": "running", "2": "starting", "3": "backoff"}),
			}},
		},
	}
}

// callTypes is the original's "MLX Call Types (reasoning vs chat)": the
// call mix and how each kind behaves. Ours fixes two of its panels: the
// token rates are per minute as titled, and the flags are split by kind.
func callTypes() Dashboard {
	perKind := func(metric string) string {
		return `sum by (kind) (rate(` + metric + `{{P}}[{R}])) / clamp_min(sum by (kind) (rate(mlx_requests_total{{P}}[{R}])), 0.0001)`
	}
	return Dashboard{
		UID: "mlx-call-types", Title: "MLX Call Types (reasoning vs chat)", Tags: []string{"mlx", "calls"},
		Description: "Reasoning against plain chat: the call mix, tokens, tools, errors and quality by kind.",
		Vars:        []Var{modelVar},
		Rows: []Row{
			{"Call mix", []Panel{
				ts("Requests / min by kind", "none", 8, q(`sum by (kind) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "{{kind}}")).min0().stacked(),
				ts("Reasoning share", "percentunit", 8,
					q(`sum(rate(mlx_requests_total{{P}, kind="reasoning"}[{R}])) / clamp_min(sum(rate(mlx_requests_total{{P}}[{R}])), 0.0001)`, "reasoning")).ratio(),
				ts("Streamed and not, by kind", "none", 8, q(`sum by (kind, streaming) (rate(mlx_requests_total{{P}}[{R}])) * 60`, "{{kind}} stream={{streaming}}")).min0(),
			}},
			{"Behavior by kind", []Panel{
				ts("Prompt tokens / min by kind", "none", 6, q(`sum by (kind) (rate(mlx_tokens_prompt_total{{P}}[{R}])) * 60`, "{{kind}}")).min0(),
				ts("Completion tokens / min by kind", "none", 6, q(`sum by (kind) (rate(mlx_tokens_completion_total{{P}}[{R}])) * 60`, "{{kind}}")).min0(),
				ts("Tool calls / min by kind", "none", 6, qe(`sum by (kind) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{kind}}", toolsOnly)).min0(),
				ts("Finish reasons / min by kind", "none", 6, q(`sum by (kind, reason) (rate(mlx_finish_reason_total{{P}}[{R}])) * 60`, "{{kind}} {{reason}}")).min0(),
			}},
			{"Tool usage", []Panel{
				ts("Tool calls / min by tool", "none", 12, qe(`sum by (tool) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{tool}}", toolsOnly)).min0().stacked(),
				ts("Tool calls / min by type", "none", 12, qe(`sum by (type) (rate(mlx_tool_calls_total{{P}}[{R}])) * 60`, "{{type}}", toolsOnly)).min0().stacked(),
			}},
			{"Efficiency and errors by kind", []Panel{
				ts("Prompt tokens / request", "none", 6, q(perKind("mlx_tokens_prompt_total"), "{{kind}}")).min0(),
				ts("Completion tokens / request", "none", 6, q(perKind("mlx_tokens_completion_total"), "{{kind}}")).min0(),
				ts("Error share by kind", "percentunit", 6, q(perKind("mlx_error_total"), "{{kind}}")).ratio(),
				ts("Temperature by kind (last request)", "none", 6, q(`max by (kind) (mlx_temperature{{P}})`, "{{kind}}")).min0(),
			}},
			{"Quality by kind", []Panel{
				ts("Hallucination risk by kind (last request)", "none", 8, q(`max by (kind) (mlx_hallucination_risk{{P}})`, "{{kind}}")).ratio(),
				ts("Hallucination flags / min by kind", "none", 8, qe(`sum by (kind) (rate(mlx_hallucination_flag_total{{P}}[{R}])) * 60`, "{{kind}}", flagsOnly)).min0(),
				stat("Reasoning share (24 h)", "percentunit", 8,
					q(`sum(increase(mlx_requests_total{{P}, kind="reasoning"}[24h])) / clamp_min(sum(increase(mlx_requests_total{{P}}[24h])), 1)`, "reasoning")).ratio(),
			}},
		},
	}
}

// modelInternals is the original's "MLX Model Sharding & Internals": the
// architecture (the linear-attention row when the model has one), weight
// and KV footprint, the ranks and their interconnect.
func modelInternals() Dashboard {
	info := func(title, attr string) Panel {
		return stat(title, "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="`+attr+`"})`, "{{model}}"))
	}
	linear := func(title, attr, why string) Panel {
		return stat(title, "none", 4, qe(`max by (model) (mlx_model_info{{P}, attr="`+attr+`"})`, "{{model}}", why))
	}
	return Dashboard{
		UID: "mlx-model-internals", Title: "MLX Model Sharding & Internals", Tags: []string{"mlx", "model"},
		Description: "The model's architecture from config.json (with the linear-attention layers of hybrid models), its weight and KV footprint, the ranks and the ring between them.",
		Vars:        []Var{modelVar, nodeVar},
		From:        "now-6h",
		Rows: []Row{
			{"Model facts", []Panel{
				table("Architecture", 4, q(`mlx_model_arch{{P}}`, "")).h(5),
				info("Layers", "layer_count"),
				info("Attention heads", "attention_heads"),
				info("KV heads", "kv_heads"),
				info("Head dim", "head_dim"),
				info("Hidden size", "hidden_size"),
			}},
			{"Linear attention", []Panel{
				linear("Linear key heads", "linear_key_heads", hybridOnly),
				linear("Linear value heads", "linear_value_heads", hybridOnly),
				linear("Linear key head dim", "linear_key_head_dim", hybridOnly),
				linear("Linear value head dim", "linear_value_head_dim", hybridOnly),
				linear("Conv kernel dim", "linear_conv_kernel_dim", hybridOnly),
				linear("MTP layers", "mtp_layers", mtpOnly),
			}},
			{"Weight footprint", []Panel{
				info("Quantization bits", "quant_bits"),
				info("Quant group size", "quant_group_size"),
				info("Vocabulary", "vocab_size"),
				info("Intermediate size", "intermediate_size"),
				stat("Tied embeddings", "none", 4, q(`max by (model) (mlx_model_info{{P}, attr="tie_word_embeddings"})`, "{{model}}")).maps(map[string]string{"0": "no", "1": "yes"}),
				stat("mlx_lm.server memory", "bytes", 4, q(`sum(mlx_worker_rss_bytes{{HW}})`, "all ranks")),
			}},
			{"Runtime shards per node", []Panel{
				ts("mlx_lm.server RSS per node", "bytes", 8, q(`sum by (node) (mlx_worker_rss_bytes{{HW}})`, "{{node}}")).min0(),
				ts("GPU memory used per node", "bytes", 8, qe(`sum by (node) (mlx_hw_gpu_mem_used_bytes{{HW}})`, "{{node}}", macOS)).min0(),
				ts("GPU utilization per node", "percent", 8, qe(`sum by (node) (mlx_hw_gpu_utilization_percent{{HW}})`, "{{node}}", macOS)).min0(),
			}},
			{"Ring interconnect", []Panel{
				ts("Ring receive and send", "Bps", 12,
					q(`sum by (node) (rate(mlx_net_rx_bytes_total{{HW}}[{R}]))`, "{{node}} rx"),
					q(`sum by (node) (rate(mlx_net_tx_bytes_total{{HW}}[{R}]))`, "{{node}} tx")).min0(),
				ts("Ring errors / s", "none", 12,
					q(`sum by (node) (rate(mlx_net_rx_errors_total{{HW}}[{R}]) + rate(mlx_net_tx_errors_total{{HW}}[{R}]))`, "{{node}}")).min0(),
			}},
			{"KV cache", []Panel{
				ts("KV cache bytes by type", "bytes", 8, q(`sum by (type) (mlx_kv_cache_bytes{{KV}})`, "{{type}}")).min0(),
				ts("KV sequences by type", "none", 8, q(`sum by (type) (mlx_kv_cache_sequences{{KV}})`, "{{type}}")).min0(),
				stat("KV cache utilization", "percentunit", 4, q(`max(mlx_kv_cache_utilization{{KV}})`, "utilization")).ratio(),
				stat("Max sequences", "none", 4, q(`max(mlx_kv_cache_max_sequences{{KV}})`, "max")),
			}},
			{"Context", []Panel{
				stat("Max context tokens", "none", 6, q(`max by (model) (mlx_context_length_max_tokens{{P}})`, "{{model}}")),
				stat("Context used (last request)", "none", 6, q(`max by (model) (mlx_context_used_tokens{{P}})`, "{{model}}")),
				stat("Context utilization", "percentunit", 6, q(`max by (model) (mlx_context_utilization{{P}})`, "{{model}}")).ratio(),
				stat("KV bytes / token", "bytes", 6, q(`max by (model) (mlx_kv_bytes_per_token{{P}})`, "{{model}}")),
				stat("KV bytes of a full context", "bytes", 6, q(`max(mlx_kv_est_bytes_max_context{{KV}})`, "full context")),
			}},
			{"Parallelism", []Panel{
				{Type: "text", Title: "How the model is split", W: 8, H: 7, Content: parallelismNote},
				ts("mlx_lm.server CPU per node", "percent", 8, q(`sum by (node) (mlx_worker_cpu_percent{{HW}})`, "{{node}}")).min0(),
				stat("Ranks (nodes reporting)", "none", 8, q(`count(max by (node) (mlx_hw_up{{HW}}))`, "nodes")),
			}},
		},
	}
}

const parallelismNote = `mlx_lm.server runs alone on one Mac, or under ` + "`mlx.launch --backend ring`" + ` across the ring's ranks: each rank holds a shard of the layers (pipeline) or of every layer (tensor parallel), and activations cross the ring between them.

The ring counters are the Thunderbolt or Ethernet interfaces of each node (` + "`mlx_net_*`" + `, the hardware receiver); the shards are the mlx_lm.server processes (` + "`mlx_worker_*`" + `).`
