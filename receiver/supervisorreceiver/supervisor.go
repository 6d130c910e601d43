package supervisorreceiver

import (
	"context"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
	"gopkg.in/natefinch/lumberjack.v2"
)

// supervisor owns the engine's lifecycle and answers each scrape.
type supervisor struct {
	cfg    *Config
	logger *zap.Logger
	st     *status
	model  string

	started time.Time
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	logFile *lumberjack.Logger
}

func newSupervisor(cfg *Config, logger *zap.Logger) *supervisor {
	return &supervisor{cfg: cfg, logger: logger, st: newStatus(), model: cfg.modelName()}
}

// activitySource is what the mlx_proxy extension offers the supervisor.
type activitySource interface{ LastEngineActivity() time.Time }

func (s *supervisor) start(_ context.Context, host component.Host) error {
	// The engine outlives the Start call: its context is the component's own.
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.started = time.Now()
	p := &prober{
		cfg:    s.cfg,
		logger: s.logger,
		st:     s.st,
		client: &http.Client{},
		model:  s.model,
	}
	if host != nil {
		if src, ok := host.GetExtensions()[s.cfg.HealthCheck.ProgressFrom].(activitySource); ok {
			p.proxyActivity = src.LastEngineActivity
		}
	}
	if s.cfg.SpawnMode() {
		s.logFile = &lumberjack.Logger{
			Filename:   s.cfg.Log.Path,
			MaxSize:    s.cfg.Log.MaxSizeMiB,
			MaxBackups: s.cfg.Log.MaxBackups,
		}
		r := &runner{cfg: s.cfg, logger: s.logger, st: s.st, out: s.logFile, tail: &tailBuffer{}}
		p.onHung = func() { r.kill(ReasonHung) }
		s.wg.Add(1)
		go func() { defer s.wg.Done(); r.run(ctx) }()
	}
	s.wg.Add(1)
	go func() { defer s.wg.Done(); p.run(ctx) }()
	return nil
}

// shutdown stops the engine (SIGTERM, then SIGKILL after the grace period)
// and waits for it. Safe without start.
func (s *supervisor) shutdown(ctx context.Context) error {
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.logFile != nil {
		return s.logFile.Close()
	}
	return nil
}

func (s *supervisor) scrape(context.Context) (pmetric.Metrics, error) {
	snap := s.st.snapshot(s.cfg.SpawnMode(), time.Now())
	return buildMetrics(snap, s.model, s.started, time.Now()), nil
}
