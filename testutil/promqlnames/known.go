package promqlnames

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/mlx-otelcol/mlx-otelcol/cmd/mdgen/mdschema"
)

// OriginalSeries are the series of the original Python stack (mlx-oc), the
// interface its users' dashboards and rules read: mlx-otelcol keeps every
// name. Histograms are listed by the names a query reads (_bucket, _sum,
// _count).
var OriginalSeries = expandHistograms([]string{
	// proxy, :8080
	"mlx_requests_total", "mlx_tokens_prompt_total", "mlx_tokens_completion_total",
	"mlx_ttft_seconds#", "mlx_generation_seconds#", "mlx_token_rate_tokens_per_second#", "mlx_queue_wait_seconds#",
	"mlx_tool_calls_total", "mlx_finish_reason_total", "mlx_temperature",
	"mlx_hallucination_risk", "mlx_hallucination_risk_histogram#", "mlx_hallucination_flag_total",
	"mlx_heuristic_repetition", "mlx_heuristic_refusal", "mlx_heuristic_hedging", "mlx_heuristic_ungrounded",
	"mlx_up", "mlx_in_flight", "mlx_error_total",
	"mlx_context_length_max_tokens", "mlx_context_used_tokens", "mlx_context_utilization", "mlx_kv_bytes_per_token",
	"mlx_prompt_cached_tokens_total", "mlx_prompt_cache_ratio", "mlx_model_info", "mlx_model_arch",
	"mlx_output_perplexity", "mlx_output_perplexity_histogram#",
	"mlx_token_entropy_nats", "mlx_token_entropy_histogram#",
	"mlx_token_confidence_mean", "mlx_token_confidence_min", "mlx_token_confidence_std",
	"mlx_token_margin_mean", "mlx_low_confidence_token_ratio",
	"mlx_confidence_scored_total", "mlx_low_confidence_response_total",
	// hardware, :9102
	"mlx_hw_up", "mlx_hw_uptime_seconds", "mlx_hw_load1", "mlx_hw_load5", "mlx_hw_load15", "mlx_hw_cpu_count",
	"mlx_hw_cpu_temp_celsius", "mlx_hw_mem_total_bytes", "mlx_hw_mem_used_bytes", "mlx_hw_mem_pressure",
	"mlx_hw_disk_total_bytes", "mlx_hw_disk_used_bytes",
	"mlx_hw_gpu_utilization_percent", "mlx_hw_gpu_frequency_mhz", "mlx_hw_gpu_power_milliwatts",
	"mlx_hw_package_power_milliwatts", "mlx_hw_cpu_power_milliwatts", "mlx_hw_ane_power_milliwatts",
	"mlx_hw_thermal_pressure", "mlx_hw_gpu_mem_used_bytes", "mlx_hw_gpu_mem_alloc_bytes", "mlx_hw_gpu_mem_total_bytes",
	"mlx_hw_gpu_iokit_util_percent", "mlx_worker_cpu_percent", "mlx_worker_rss_bytes",
	"mlx_proc_cpu_percent", "mlx_proc_rss_bytes",
	"mlx_net_rx_bytes_total", "mlx_net_tx_bytes_total", "mlx_net_rx_errors_total", "mlx_net_tx_errors_total",
	// KV cache, :9104
	"mlx_kv_agent_up", "mlx_kv_cache_sequences", "mlx_kv_cache_bytes", "mlx_kv_cache_max_sequences",
	"mlx_kv_cache_utilization", "mlx_kv_est_bytes_max_context",
	// supervisor, :9105
	"mlx_server_state", "mlx_server_up", "mlx_server_ready", "mlx_model_loaded", "mlx_server_restarts_total",
	"mlx_server_crashes_total", "mlx_server_uptime_seconds", "mlx_server_last_exit_code",
	"mlx_server_last_crash_reason", "mlx_server_health_checks_total", "mlx_server_backoff_seconds",
	// log tailer, :9106
	"mlx_log_tailer_up", "mlx_log_tailer_lines_total", "mlx_log_tailer_shipped_total", "mlx_log_tailer_dropped_total",
	"mlx_log_tailer_errors_total", "mlx_log_tailer_file_bytes", "mlx_log_tailer_queue_depth",
})

// CollectorSeries are the collector's own series the rules and dashboards
// read, as the v0.165 service serves them at level normal with its default
// Prometheus reader (no _total suffix): exporterhelper, receiverhelper,
// processorhelper and service documentation.md.
var CollectorSeries = []string{
	"otelcol_exporter_sent_spans", "otelcol_exporter_sent_log_records", "otelcol_exporter_sent_metric_points",
	"otelcol_exporter_send_failed_spans", "otelcol_exporter_send_failed_log_records", "otelcol_exporter_send_failed_metric_points",
	"otelcol_exporter_enqueue_failed_spans", "otelcol_exporter_enqueue_failed_log_records", "otelcol_exporter_enqueue_failed_metric_points",
	"otelcol_exporter_queue_size", "otelcol_exporter_queue_capacity",
	"otelcol_receiver_accepted_spans", "otelcol_receiver_accepted_log_records", "otelcol_receiver_accepted_metric_points",
	"otelcol_receiver_refused_spans", "otelcol_receiver_refused_log_records", "otelcol_receiver_refused_metric_points",
	"otelcol_receiver_failed_spans", "otelcol_receiver_failed_log_records", "otelcol_receiver_failed_metric_points",
	"otelcol_processor_incoming_items", "otelcol_processor_outgoing_items",
	"otelcol_process_uptime", "otelcol_process_memory_rss", "otelcol_process_cpu_seconds",
	"otelcol_process_runtime_heap_alloc_bytes",
}

func expandHistograms(names []string) []string {
	var out []string
	for _, n := range names {
		if base, ok := strings.CutSuffix(n, "#"); ok {
			out = append(out, base+"_bucket", base+"_sum", base+"_count")
			continue
		}
		out = append(out, n)
	}
	return out
}

// DocumentedNames returns the metric names the components of the module at
// root list in their metadata.yaml (receiver/*/, processor/*/, exporter/*/,
// extension/*/): the one schema their documentation.md is generated from.
// A histogram yields its _bucket, _sum and _count series.
func DocumentedNames(root string) ([]string, error) {
	var files []string
	for _, p := range []string{"receiver/*/metadata.yaml", "processor/*/metadata.yaml", "exporter/*/metadata.yaml", "extension/*/metadata.yaml"} {
		m, err := filepath.Glob(filepath.Join(root, p))
		if err != nil {
			return nil, err
		}
		files = append(files, m...)
	}
	set := map[string]struct{}{}
	for _, f := range files {
		c, err := mdschema.Load(f)
		if err != nil {
			return nil, err
		}
		for _, m := range c.Metrics {
			set[m.Key] = struct{}{}
			if m.Value.Histogram != nil {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					set[m.Key+suffix] = struct{}{}
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// KnownNames is every name a shipped query may read: the original series,
// the collector's own, what scrapes and vmalert generate, what the
// components at root document, and extra (e.g. the rules' recorded names).
func KnownNames(root string, extra ...string) (map[string]bool, error) {
	doc, err := DocumentedNames(root)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, list := range [][]string{OriginalSeries, CollectorSeries, GeneratedNames, doc, extra} {
		for _, n := range list {
			known[n] = true
		}
	}
	return known, nil
}

// MayBeAbsent are series that a healthy stack may not serve, and why: on
// Linux (the demo: no Apple hardware), before a fault, or without a given
// configuration or workload. The live-stack test's "every name read exists"
// check can accept these (dashboards/expected-empty.yml says the same per
// dashboard query). A starting list: trim it as the components settle.
var MayBeAbsent = map[string]string{
	"mlx_hw_gpu_utilization_percent":  "macos-only: powermetrics",
	"mlx_hw_gpu_frequency_mhz":        "macos-only: powermetrics",
	"mlx_hw_gpu_power_milliwatts":     "macos-only: powermetrics",
	"mlx_hw_package_power_milliwatts": "macos-only: powermetrics",
	"mlx_hw_cpu_power_milliwatts":     "macos-only: powermetrics",
	"mlx_hw_ane_power_milliwatts":     "macos-only: powermetrics",
	"mlx_hw_thermal_pressure":         "macos-only: powermetrics thermal sampler / notifyutil",
	"mlx_hw_gpu_mem_used_bytes":       "macos-only: IOKit (ioreg)",
	"mlx_hw_gpu_mem_alloc_bytes":      "macos-only: IOKit (ioreg)",
	"mlx_hw_gpu_mem_total_bytes":      "macos-only: IOKit (ioreg)",
	"mlx_hw_gpu_iokit_util_percent":   "macos-only: IOKit (ioreg)",
	"mlx_hw_mem_pressure_level":       "platform-only: macOS sysctl, or Linux with pressure stall information (/proc/pressure)",
	"mlx_hw_cpu_temp_celsius":         "sensor-only: CPU temperature sensors (Apple Silicon, Linux hwmon)",
	"mlx_hw_gpu_temp_celsius":         "macos-only: IOHID GPU die sensors",
	"mlx_hw_thermal_pressure_level":   "macos-only: notifyutil / powermetrics thermal sampler",

	"mlx_hw_nvidia_gpu_utilization_ratio":  "nvidia-only: nvidia-smi on a Linux node",
	"mlx_hw_nvidia_gpu_memory_used_bytes":  "nvidia-only: nvidia-smi on a Linux node",
	"mlx_hw_nvidia_gpu_memory_total_bytes": "nvidia-only: nvidia-smi on a Linux node",
	"mlx_hw_nvidia_gpu_power_watts":        "nvidia-only: nvidia-smi on a Linux node",
	"mlx_hw_nvidia_gpu_temp_celsius":       "nvidia-only: nvidia-smi on a Linux node",

	"mlx_hallucination_flag_total":      "fault-only: created by the first flagged response",
	"mlx_low_confidence_response_total": "fault-only: created by the first low-confidence response",
	"mlx_tool_calls_total":              "workload-only: created by the first tool call",

	"mlx_kv_cache_max_bytes": "config-only: prompt_cache_bytes configured",

	// The proxy serves the gauges gateways read only with compat [vllm]
	// (TestVLLMCompatGaugesMoveWithLoad); the shipped config leaves it off.
	"vllm:num_requests_waiting": "config-only: the proxy's compat [vllm]",
	"vllm:num_requests_running": "config-only: the proxy's compat [vllm]",
	"vllm:kv_cache_usage_perc":  "config-only: the proxy's compat [vllm] and a KV cache state",
	// and so are the request histograms and counters benchmarks read
	// (TestStackInferencePerfReadsTheVLLMSeries), as the panels name them.
	"vllm:e2e_request_latency_seconds_bucket":           "config-only: the proxy's compat [vllm]",
	"vllm:generation_tokens_total":                      "config-only: the proxy's compat [vllm]",
	"vllm:inter_token_latency_seconds_bucket":           "config-only: the proxy's compat [vllm]",
	"vllm:prompt_tokens_total":                          "config-only: the proxy's compat [vllm]",
	"vllm:request_decode_time_seconds_count":            "config-only: the proxy's compat [vllm]",
	"vllm:request_decode_time_seconds_sum":              "config-only: the proxy's compat [vllm]",
	"vllm:request_generation_tokens_count":              "config-only: the proxy's compat [vllm]",
	"vllm:request_generation_tokens_sum":                "config-only: the proxy's compat [vllm]",
	"vllm:request_inference_time_seconds_count":         "config-only: the proxy's compat [vllm]",
	"vllm:request_inference_time_seconds_sum":           "config-only: the proxy's compat [vllm]",
	"vllm:request_prefill_time_seconds_count":           "config-only: the proxy's compat [vllm]",
	"vllm:request_prefill_time_seconds_sum":             "config-only: the proxy's compat [vllm]",
	"vllm:request_prompt_tokens_count":                  "config-only: the proxy's compat [vllm]",
	"vllm:request_prompt_tokens_sum":                    "config-only: the proxy's compat [vllm]",
	"vllm:request_queue_time_seconds_count":             "config-only: the proxy's compat [vllm]",
	"vllm:request_queue_time_seconds_sum":               "config-only: the proxy's compat [vllm]",
	"vllm:request_success_total":                        "config-only: the proxy's compat [vllm]",
	"vllm:request_time_per_output_token_seconds_bucket": "config-only: the proxy's compat [vllm]",
	"vllm:time_to_first_token_seconds_bucket":           "config-only: the proxy's compat [vllm]",

	// The routing series exist only with the proxy's upstreams (several
	// engines behind one proxy, TestRoutingAcrossThreeEngines); the
	// shipped config has one engine.
	"mlx_upstream_up":              "config-only: the proxy's upstreams",
	"mlx_upstream_in_flight":       "config-only: the proxy's upstreams",
	"mlx_upstream_requests_total":  "config-only: the proxy's upstreams",
	"mlx_upstream_ejections_total": "config-only: the proxy's upstreams",
	"mlx_upstream_retries_total":   "config-only: the proxy's upstreams",
	"mlx_model_upstreams_up":       "config-only: the proxy's upstreams",

	"mlx_opik_scores_unseen_total": "config/fault: the opik exporter with an endpoint, once a read-back found scores Opik does not show",
	"mlx_opik_readbacks_total":     "config/fault: the opik exporter with an endpoint, once a scored trace was read back",

	"otelcol_exporter_send_failed_spans":            "signal/fault: a traces exporter that failed",
	"otelcol_exporter_send_failed_log_records":      "signal/fault: a logs exporter that failed",
	"otelcol_exporter_send_failed_metric_points":    "signal/fault: a metrics exporter (exporterhelper) that failed",
	"otelcol_exporter_enqueue_failed_spans":         "signal/fault: a traces exporter whose queue was full",
	"otelcol_exporter_enqueue_failed_log_records":   "signal/fault: a logs exporter whose queue was full",
	"otelcol_exporter_enqueue_failed_metric_points": "signal/fault: a metrics exporter whose queue was full",
	"otelcol_exporter_sent_spans":                   "signal-only: a traces exporter (exporterhelper) that sent",
	"otelcol_receiver_refused_spans":                "signal-only: a traces receiver that received",
	"otelcol_receiver_failed_spans":                 "signal-only: a traces receiver that received",
}
