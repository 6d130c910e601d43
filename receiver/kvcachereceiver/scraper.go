package kvcachereceiver

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/internal/modelconfig"
)

// kvBytesPerElement is the size of one cached key or value element: MLX
// keeps the cache in the activation dtype, 2 bytes for float16 and
// bfloat16, as the original agent and the proxy count it.
const kvBytesPerElement = 2

// kvScraper follows the log at each collection and reports the latest state.
type kvScraper struct {
	cfg    *Config
	logger *zap.Logger
	now    func() time.Time

	mu      sync.Mutex
	state   assembler
	follow  *follower
	started time.Time
	// logErr is the last error reading the log, so a change is logged once
	// rather than at every collection.
	logErr string
	model  modelFacts
	// usageSinks are the collector's extensions that take the cache's
	// utilisation (the mlx_proxy serves it as vllm:kv_cache_usage_perc).
	usageSinks []kvUsageSink
}

// kvUsageSink is an extension that takes the utilisation at each
// collection: the mlx_proxy extension (SetKVCacheUsage). Found among the
// host's extensions at start, so the proxy needs no setting to name the
// receiver: one collector observes one engine.
type kvUsageSink interface {
	SetKVCacheUsage(u float64, known bool)
}

// modelFacts is what the receiver took from the model's config.json.
type modelFacts struct {
	loaded bool
	// estBytesMaxContext is the KV cache of one sequence as long as the
	// model's context; 0 when config.json gives no context length.
	estBytesMaxContext int64
	lastErr            string
}

func newKVScraper(cfg *Config, logger *zap.Logger) *kvScraper {
	return &kvScraper{cfg: cfg, logger: logger, now: time.Now}
}

func (s *kvScraper) start(_ context.Context, host component.Host) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if host != nil {
		for _, ext := range host.GetExtensions() {
			if sink, ok := ext.(kvUsageSink); ok {
				s.usageSinks = append(s.usageSinks, sink)
			}
		}
	}
	s.started = s.now()
	s.follow = newFollower(s.cfg.LogPath, s.cfg.readBackBytes(), &s.state)
	s.loadModel()
	return nil
}

// shutdown closes the log. Safe without start.
func (s *kvScraper) shutdown(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.follow == nil {
		return nil
	}
	return s.follow.Close()
}

func (s *kvScraper) scrape(context.Context) (pmetric.Metrics, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	err := s.follow.Poll(now)
	s.noteLogError(err)
	// The engine may download the model after the collector starts: until
	// config.json is found, look again at every collection (a stat or two).
	s.loadModel()
	snap := snapshot{
		logReadable:  err == nil,
		maxSequences: int64(s.cfg.PromptCacheSize),
	}
	snap.maxBytes, snap.hasMaxBytes = s.cfg.maxBytes()
	snap.state, snap.known = s.state.Latest()
	if s.model.loaded && s.model.estBytesMaxContext > 0 {
		snap.estBytesMaxContext, snap.hasEst = s.model.estBytesMaxContext, true
	}
	s.shareUsage(snap)
	return buildMetrics(snap, s.started, now), nil
}

// shareUsage gives the sinks the utilisation buildMetrics emits, or says
// there is none.
func (s *kvScraper) shareUsage(snap snapshot) {
	u, ok := 0.0, false
	if snap.known {
		u, ok = utilization(snap.state.Total, snap)
	}
	for _, sink := range s.usageSinks {
		sink.SetKVCacheUsage(u, ok)
	}
}

// following says whether the last collection read the engine's log: the
// KV cache role works (internal/fleet).
func (s *kvScraper) following() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logErr == ""
}

func (s *kvScraper) noteLogError(err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg == s.logErr {
		return
	}
	switch {
	case err == nil:
		s.logger.Info("Following the engine log", zap.String("path", s.cfg.LogPath))
	case errors.Is(err, fs.ErrNotExist):
		s.logger.Info("The engine log does not exist yet; waiting for it", zap.String("path", s.cfg.LogPath))
	default:
		s.logger.Warn("Cannot read the engine log", zap.String("path", s.cfg.LogPath), zap.Error(err))
	}
	s.logErr = msg
}

func (s *kvScraper) loadModel() {
	if s.cfg.Model == "" || s.model.loaded {
		return
	}
	info, path, err := modelconfig.Load(s.cfg.Model, s.cfg.HFHubCache)
	if err != nil {
		if err.Error() != s.model.lastErr {
			s.logger.Warn("Cannot read the model's config.json; mlx_kv_est_bytes_max_context is left out until it can",
				zap.String("model", s.cfg.Model), zap.Error(err))
			s.model.lastErr = err.Error()
		}
		return
	}
	s.model = modelFacts{loaded: true, estBytesMaxContext: info.KVBytesPerToken(kvBytesPerElement) * int64(info.MaxContext)}
	s.logger.Info("Read the model's config.json", zap.String("path", path),
		zap.Int64("kv_bytes_per_token", info.KVBytesPerToken(kvBytesPerElement)), zap.Int("max_context", info.MaxContext))
}
