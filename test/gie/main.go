// Command gie-picker reads a model server's /metrics with the Gateway API
// Inference Extension's own endpoint picker code (v1.5.0, the last release
// with the picker in this module: its HTTP metrics data source and its core
// metrics extractor with the built-in engine defaults, vLLM the default
// engine) and prints what the picker read as JSON: the numbers it balances
// on and the extraction's error, if any. The e2e tests run it against the
// built collector's /metrics (test/e2e/vllm_picker_test.go).
//
// It is a module of its own so that the picker's Kubernetes dependencies
// stay out of the distribution's go.mod.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"time"

	fwkdl "sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/interface/datalayer"
	extractor "sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/datalayer/extractor/metrics"
	source "sigs.k8s.io/gateway-api-inference-extension/pkg/epp/framework/plugins/datalayer/source/metrics"
)

// reading is what the picker holds for the endpoint after one poll.
type reading struct {
	WaitingQueueSize    int     `json:"waiting_queue_size"`
	RunningRequestsSize int     `json:"running_requests_size"`
	KVCacheUsagePercent float64 `json:"kv_cache_usage_percent"`
	Updated             bool    `json:"updated"`
	// ExtractError is the extractor's error: the specs whose series the
	// page lacks (it still keeps what it found).
	ExtractError string `json:"extract_error,omitempty"`
}

func main() {
	hostPort := flag.String("endpoint", "", "host:port of the model server (its /metrics)")
	flag.Parse()
	if err := run(*hostPort); err != nil {
		fmt.Fprintln(os.Stderr, "gie-picker:", err)
		os.Exit(1)
	}
}

func run(hostPort string) error {
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return fmt.Errorf("-endpoint: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	ds, err := source.NewHTTPMetricsDataSource("http", "/metrics", "metrics")
	if err != nil {
		return err
	}
	plugin, err := extractor.CoreMetricsExtractorFactory("core-metrics-extractor", nil, nil)
	if err != nil {
		return err
	}
	ext := plugin.(*extractor.Extractor)
	ep := fwkdl.NewEndpoint(&fwkdl.EndpointMetadata{Address: host, Port: port, MetricsHost: hostPort}, fwkdl.NewMetrics())

	data, err := ds.Poll(ctx, ep)
	if err != nil {
		return fmt.Errorf("poll: %w", err)
	}
	var out reading
	if err := ext.Extract(ctx, data, ep); err != nil {
		out.ExtractError = err.Error()
	}
	m := ep.GetMetrics()
	out.WaitingQueueSize = m.WaitingQueueSize
	out.RunningRequestsSize = m.RunningRequestsSize
	out.KVCacheUsagePercent = m.KVCacheUsagePercent
	out.Updated = !m.UpdateTime.IsZero()
	return json.NewEncoder(os.Stdout).Encode(out)
}
