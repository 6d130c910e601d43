package supervisorreceiver

import (
	"context"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
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

// answerSource is what it offers for probing only when idle.
type answerSource interface{ LastEngineAnswer() time.Time }

// inFlightSource is what it offers to tell a busy engine from a hung one.
type inFlightSource interface{ InFlight() int64 }

// readinessSink hears whether the engine is ready (the proxy routes no
// request to an engine that is not, with several).
type readinessSink interface {
	SetEngineReady(endpoint string, ready bool)
}

// waitSource says how long the proxy itself waits for an answer to begin.
type waitSource interface{ UpstreamWait() time.Duration }

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
		ext := host.GetExtensions()[s.cfg.HealthCheck.ProgressFrom]
		if src, ok := ext.(activitySource); ok {
			p.proxyActivity = src.LastEngineActivity
		}
		if src, ok := ext.(answerSource); ok {
			p.proxyAnswer = src.LastEngineAnswer
		}
		if src, ok := ext.(inFlightSource); ok {
			p.inFlight = src.InFlight
		}
		if sink, ok := ext.(readinessSink); ok {
			p.readySink = sink.SetEngineReady
		}
		if src, ok := ext.(waitSource); ok && s.cfg.HealthCheck.HangAfter > 0 {
			if w := src.UpstreamWait(); w == 0 || w > s.cfg.HealthCheck.BusyLimit {
				s.logger.Warn("health_check.busy_limit is shorter than the proxy's wait for an answer (timeouts.upstream_response_header; 0 is no limit): an engine silent on one long non-streamed answer for longer is restarted as hung while the proxy still waits; raise busy_limit to match",
					zap.Duration("busy_limit", s.cfg.HealthCheck.BusyLimit), zap.Duration("upstream_response_header", w))
			}
		}
	}
	if s.cfg.SpawnMode() {
		s.logFile = &lumberjack.Logger{
			Filename:   s.cfg.Log.Path,
			MaxSize:    s.cfg.Log.MaxSizeMiB,
			MaxBackups: s.cfg.Log.MaxBackups,
		}
		r := &runner{cfg: s.cfg, logger: s.logger, st: s.st, out: s.logFile, tail: &tailBuffer{}, healthDead: make(chan struct{}, 1)}
		p.onHung = func() { r.kill(ReasonHung) }
		p.onDead = r.reportHealthDead
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.keep(ctx, loopRunner, r.run) }()
	}
	if !s.cfg.SpawnMode() && s.cfg.Log.Path != "" {
		f := newLogFollower(s.cfg.Log.Path, s.st, s.logger)
		s.wg.Add(1)
		go func() { defer s.wg.Done(); s.keep(ctx, loopFollower, f.run) }()
	}
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.keep(ctx, loopProber, p.run) }()
	return nil
}

// The supervisor's long-lived loops, the where label of
// mlx_supervisor_panics_total.
const (
	loopRunner   = "runner"
	loopProber   = "prober"
	loopFollower = "follower"
)

var loops = []string{loopRunner, loopProber, loopFollower}

// keep runs loop until ctx ends. A panic in it is logged at error level
// with its stack, counted, and the loop started again a second later: the
// engine must stay supervised, and the collector must not die with it.
func (s *supervisor) keep(ctx context.Context, where string, loop func(context.Context)) {
	for ctx.Err() == nil {
		if !s.runRecovered(ctx, where, loop) {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// runRecovered runs loop once and reports whether it panicked.
func (s *supervisor) runRecovered(ctx context.Context, where string, loop func(context.Context)) (panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			panicked = true
			s.st.mu.Lock()
			s.st.panics[where]++
			s.st.mu.Unlock()
			s.logger.Error("Recovered a panic in the supervisor; the loop starts again", zap.String("where", where), zap.Any("panic", r), zap.Stack("stack"))
		}
	}()
	loop(ctx)
	return false
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
