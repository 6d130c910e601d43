// Package judgereceiver is the LLM-as-judge loop of the original
// cluster/opik_evaluator.py inside the collector: every interval it reads
// the newest traces (from Opik, or from Jaeger without Opik), asks the
// judge model (by default the cluster itself, through the proxy) for
// 0-1 scores, writes them to Opik as feedback scores, emits each as a
// gen_ai.evaluation.result event into a logs pipeline, and counts what it
// did in the mlx_judge_* series. See documentation.md.
package judgereceiver

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet/fleetmetrics"
	"github.com/mlx-otelcol/mlx-otelcol/internal/judge"
)

var componentType = component.MustNewType("mlx_judge")

// NewFactory returns the factory of the mlx_judge receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(componentType, createDefaultConfig,
		receiver.WithLogs(createLogs, component.StabilityLevelAlpha),
		receiver.WithMetrics(createMetrics, component.StabilityLevelAlpha))
}

// The original's defaults (opik_evaluator.py), and ours where it had none.
const (
	defaultInterval    = 10 * time.Second
	defaultLimit       = 20
	defaultJudgeModel  = "default_model"
	defaultJudgeTO     = 120 * time.Second
	defaultMaxInFlight = 1
	defaultProject     = "mlx"
	defaultOpikTO      = 15 * time.Second
	defaultJaeger      = "http://127.0.0.1:16686"
	defaultService     = "mlx-metrics-proxy"
	defaultLookback    = 15 * time.Minute
	defaultMaxPerMin   = 30
	defaultMaxTokens   = 2048
)

func createDefaultConfig() component.Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = 10 * time.Second
	cc.InitialDelay = 0
	return &Config{
		ControllerConfig: cc,
		Interval:         defaultInterval,
		Limit:            defaultLimit,
		Source:           sourceAuto,
		Judge: JudgeConfig{Extension: component.MustNewID("mlx_proxy"), Model: defaultJudgeModel,
			Timeout: defaultJudgeTO, MaxInFlight: defaultMaxInFlight, Thinking: thinkingAuto, MaxTokens: defaultMaxTokens},
		Opik:         OpikConfig{Project: defaultProject, Timeout: defaultOpikTO},
		Jaeger:       JaegerConfig{Endpoint: defaultJaeger, Service: defaultService, Lookback: defaultLookback, Timeout: defaultOpikTO},
		Rubrics:      append([]judge.Rubric(nil), judge.DefaultRubrics...),
		SamplingRate: 1,
		Filters:      FiltersConfig{Origins: []string{judge.OriginUser}},
		MaxPerMinute: defaultMaxPerMin,
	}
}

// logsReceiver hands the loop's evaluation events to a logs pipeline.
type logsReceiver struct{ *judgeLoop }

func createLogs(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Logs) (receiver.Logs, error) {
	l := loopFor(cfg.(*Config), set)
	l.setLogs(next)
	return logsReceiver{l}, nil
}

func createMetrics(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	c := cfg.(*Config)
	l := loopFor(c, set)
	role := fleetmetrics.New(set, c.Agent, fleet.Settings{Role: fleet.RoleJudge}, next, l.running)
	sc, err := scraper.NewMetrics(func(context.Context) (pmetric.Metrics, error) {
		return buildMetrics(l.stats.snapshot(), l.start, time.Now()), nil
	}, scraper.WithStart(l.Start), scraper.WithShutdown(l.Shutdown))
	if err != nil {
		return nil, err
	}
	rcv, err := scraperhelper.NewMetricsController(&c.ControllerConfig, set, role.Consumer(),
		scraperhelper.AddMetricsScraper(componentType, sc))
	if err != nil {
		return nil, err
	}
	return role.Wrap(rcv), nil
}
