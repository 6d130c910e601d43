package proxyreceiver

// What tracing costs the request path, with tracing off and on side by side
// in one run, against the simulated engine with no artificial delay:
//
//	JAEGER=bin/jaeger go test -run '^$' -bench Tracing -benchtime 2000x ./receiver/proxyreceiver/
//
// "on" is the whole trace path of the shipped config: the proxy's spans
// (capture_content on) through this receiver, the batch processor and core's
// otlp exporter into a real Jaeger (JAEGER: the project's build). "off" is
// the same proxy with no traces pipeline attached. Both share the engine.
// Reported per mode and concurrency: requests per second and p50/p99 of
// each, the added p50 and the throughput ratio on/off. Nothing asserts a
// timing.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configtls"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/mlx-otelcol/mlx-otelcol/extension/proxyextension"
	"github.com/mlx-otelcol/mlx-otelcol/standins/mlxsim"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/loadgen"
)

func freeAddr(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startJaegerForBench runs the project's Jaeger with the shipped config on
// free ports and returns its OTLP/gRPC address and its process.
func startJaegerForBench(b *testing.B) (string, *os.Process) {
	bin := os.Getenv("JAEGER")
	if bin == "" {
		b.Skip("JAEGER is not set (make bench sets it to bin/jaeger)")
	}
	query, otlp := freeAddr(b), freeAddr(b)
	cmd := exec.Command(bin, "--config", filepath.Join("..", "..", "config", "jaeger", "jaeger.yaml"))
	cmd.Env = append(os.Environ(), "JAEGER_DATA_DIR="+b.TempDir(), "JAEGER_QUERY_HTTP="+query, "JAEGER_OTLP_GRPC="+otlp,
		"JAEGER_QUERY_GRPC="+freeAddr(b), "JAEGER_OTLP_HTTP="+freeAddr(b))
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + query + "/api/services"); err == nil {
			resp.Body.Close()
			return otlp, cmd.Process
		}
		if time.Now().After(deadline) {
			b.Fatal("jaeger did not answer")
		}
	}
}

// startProxyExt runs an mlx_proxy extension in front of engine.
func startProxyExt(b *testing.B, engine string) (extension.Extension, string) {
	f := proxyextension.NewFactory()
	cfg := f.CreateDefaultConfig().(*proxyextension.Config)
	cfg.Endpoint = freeAddr(b)
	cfg.Upstream = engine
	cfg.Model = "mlx-community/Qwen3-4B-4bit"
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ext.Shutdown(context.Background()) })
	return ext, "http://" + cfg.Endpoint
}

// tracePipeline attaches this receiver, the batch processor and an otlp
// exporter to Jaeger to ext, as the shipped traces pipeline does.
func tracePipeline(b *testing.B, ext extension.Extension, jaegerOTLP string) {
	ctx := context.Background()
	ef := otlpexporter.NewFactory()
	ecfg := ef.CreateDefaultConfig().(*otlpexporter.Config)
	ecfg.ClientConfig.Endpoint = jaegerOTLP
	ecfg.ClientConfig.TLS = configtls.ClientConfig{Insecure: true}
	exp, err := ef.CreateTraces(ctx, exportertest.NewNopSettings(ef.Type()), ecfg)
	if err != nil {
		b.Fatal(err)
	}
	pf := batchprocessor.NewFactory()
	proc, err := pf.CreateTraces(ctx, processortest.NewNopSettings(pf.Type()), pf.CreateDefaultConfig(), exp)
	if err != nil {
		b.Fatal(err)
	}
	f := NewFactory()
	rcv, err := f.CreateTraces(ctx, receivertest.NewNopSettings(componentType), f.CreateDefaultConfig(), proc)
	if err != nil {
		b.Fatal(err)
	}
	h := host{component.NewID(componentType): ext}
	for _, c := range []component.Component{exp, proc, rcv} {
		if err := c.Start(ctx, h); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() {
		for _, c := range []component.Component{rcv, proc, exp} {
			_ = c.Shutdown(ctx)
		}
	})
}

func BenchmarkTracing(b *testing.B) {
	jaegerOTLP, jaegerProc := startJaegerForBench(b)
	sim := mlxsim.New(mlxsim.Options{Model: "mlx-community/Qwen3-4B-4bit", Seed: 7, PrefillTPS: 1e12, DecodeTPS: 1e12}, io.Discard)
	engine := httptest.NewServer(sim.Handler())
	b.Cleanup(engine.Close)
	b.Cleanup(sim.Close)
	_, off := startProxyExt(b, engine.URL)
	onExt, on := startProxyExt(b, engine.URL)
	tracePipeline(b, onExt, jaegerOTLP)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}, Timeout: 30 * time.Second}

	for _, stream := range []bool{false, true} {
		body := `{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 16}`
		if stream {
			body = `{"messages": [{"role": "user", "content": "Say hello"}], "max_tokens": 16, "stream": true}`
		}
		for _, c := range []int{1, 16} {
			b.Run(fmt.Sprintf("stream=%v/c=%d", stream, c), func(b *testing.B) {
				n := max(b.N, c)
				run := func(base string, n int) ([]time.Duration, float64) {
					lat, rps, err := loadgen.Run(n, c, loadgen.Post(client, base+"/v1/chat/completions", body))
					if err != nil {
						b.Fatal(err)
					}
					return lat, rps
				}
				run(off, c) // warm both paths
				run(on, c)
				b.ResetTimer()
				jaegerCPU := cpuSeconds(jaegerProc.Pid)
				// Half of each, interleaved, so that a drift of the machine
				// falls on both.
				offLat, offRPS := run(off, n/2)
				onLat, onRPS := run(on, n/2)
				offLat2, offRPS2 := run(off, n/2)
				onLat2, onRPS2 := run(on, n/2)
				b.StopTimer()
				// What Jaeger's ingest of the "on" spans took of the same
				// two cores, per traced request.
				b.ReportMetric((cpuSeconds(jaegerProc.Pid)-jaegerCPU)*1e3/float64(2*(n/2)), "jaeger-cpu-ms/req")
				offLat, onLat = append(offLat, offLat2...), append(onLat, onLat2...)
				offRPS, onRPS = (offRPS+offRPS2)/2, (onRPS+onRPS2)/2
				b.ReportMetric(0, "ns/op")
				b.ReportMetric(offRPS, "off-req/s")
				b.ReportMetric(onRPS, "on-req/s")
				b.ReportMetric(onRPS/offRPS, "on/off-throughput")
				b.ReportMetric(loadgen.Percentile(offLat, 0.5), "off-p50-ms")
				b.ReportMetric(loadgen.Percentile(onLat, 0.5), "on-p50-ms")
				b.ReportMetric(loadgen.Percentile(offLat, 0.99), "off-p99-ms")
				b.ReportMetric(loadgen.Percentile(onLat, 0.99), "on-p99-ms")
				b.ReportMetric(loadgen.Percentile(onLat, 0.5)-loadgen.Percentile(offLat, 0.5), "added-p50-ms")
			})
		}
	}
}

// cpuSeconds is the CPU time a process has used (Linux /proc; 0 elsewhere).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	var utime, stime float64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	return (utime + stime) / 100 // USER_HZ
}
