package proxy

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/internal/modelconfig"
)

// upState remembers mlx_up to log its changes, not every probe.
type upState struct{ v atomic.Int32 } // 0 unknown, 1 up, 2 down

// setUp sets mlx_up from a probe or from a request's fate.
func (p *Proxy) setUp(up bool) {
	p.metrics.setUp(up)
	state := int32(2)
	if up {
		state = 1
	}
	if old := p.upState.v.Swap(state); old != state {
		if up {
			p.log.Info("Upstream engine reachable", zap.String("upstream", p.upstream.Redacted()))
		} else {
			p.log.Warn("Upstream engine unreachable", zap.String("upstream", p.upstream.Redacted()))
		}
	}
}

// probeLoop asks the engine's /health at start and every ProbeInterval.
// mlx_lm answers it as soon as its HTTP server is up (before the model has
// loaded): mlx_up says the engine is reachable, the supervisor's
// mlx_server_ready says it can generate. From mlx-lm's #1791 (main after
// 0.32.0) /health answers 503 once the generation thread is dead, which
// makes mlx_up 0 at once; mlx-lm 0.31.3 answers 200 all the same, and only
// the supervisor's log watch and probes see that death.
func (p *Proxy) probeLoop(ctx context.Context, done chan struct{}) {
	defer close(done)
	interval := p.cfg.ProbeInterval
	if interval <= 0 {
		interval = 15 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p.probeOnce(ctx, min(interval, 5*time.Second))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// probeOnce probes and, until they are known, loads the model facts; a
// panic loses this round only.
func (p *Proxy) probeOnce(ctx context.Context, timeout time.Duration) {
	defer func() {
		if r := recover(); r != nil {
			p.metrics.recovered(p.log, panicProbe, r)
		}
	}()
	hook(panicProbe)
	if p.router != nil {
		p.router.probeAll(ctx, timeout)
		p.loadRoutedFacts()
		return
	}
	p.probe(ctx, timeout)
	if !p.modelFactsLoaded() {
		p.loadModelFacts()
	}
}

func (p *Proxy) probe(ctx context.Context, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.upstream.JoinPath("/health").String(), nil)
	if err != nil {
		return
	}
	req.Header.Set("User-Agent", "mlx-otelcol-proxy")
	resp, err := p.transport.RoundTrip(req)
	if err != nil {
		if ctx.Err() != nil && ctx.Err() != context.DeadlineExceeded {
			return // shutting down: say nothing
		}
		p.setUp(false)
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable && p.upState.v.Load() != 2 {
		p.log.Warn("Upstream engine answers /health with 503: its generation thread is dead", zap.String("upstream", p.upstream.Redacted()))
	}
	p.setUp(resp.StatusCode == http.StatusOK)
}

func (p *Proxy) modelFactsLoaded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.factsLoaded
}

// loadModelFacts reads the model's config.json into mlx_model_info,
// mlx_model_arch, mlx_context_length_max_tokens and
// mlx_kv_bytes_per_token. A model given by repo id may not be in the
// Hugging Face cache yet (mlx_lm downloads it at start), so a failure is
// retried at every probe and logged once.
func (p *Proxy) loadModelFacts() {
	ref := first(p.cfg.ModelConfig, p.cfg.Model)
	p.mu.Lock()
	defer p.mu.Unlock()
	if ref == "" || p.factsLoaded {
		p.factsLoaded = true
		return
	}
	lim, err := p.readFacts(p.cfg.modelLabel(), ref)
	if err != nil {
		if !p.factsWarned {
			p.factsWarned = true
			p.log.Warn("Model config.json not found yet; model facts will follow when it is", zap.String("model_config", ref), zap.Error(err))
		}
		return
	}
	p.factsLoaded = true
	p.limits.Store(lim)
}

// loadLimits makes the checks' facts of the model from its config.json
// (read as info, at path) and the tokenizer.json beside it.
func (p *Proxy) loadLimits(info modelconfig.Info, path string) *modelLimits {
	m := &modelLimits{vocab: info.VocabSize, context: info.MaxContext}
	tok, err := modelconfig.LoadTokenizer(filepath.Dir(path))
	if err != nil {
		p.log.Info("Prompts are not checked against the context: no bound of tokens from the model's tokenizer.json",
			zap.String("dir", filepath.Dir(path)), zap.Error(err))
		return m
	}
	m.prompt = newTokenBound(tok)
	p.log.Info("Prompts are checked against the context", zap.Int("max_context", info.MaxContext),
		zap.Int("max_token_bytes", tok.MaxTokenBytes), zap.Strings("normalizers", tok.Normalizers))
	return m
}

// loadRoutedFacts loads, with several upstreams, each served model's
// facts the checks need, from its config.json: model_config's for the
// configured model, else found as the model's name says (a path, or a
// repo id in the Hugging Face cache); until found, the checks that need
// them are skipped for that model, as for one engine whose config.json is
// not found.
func (p *Proxy) loadRoutedFacts() {
	for model, lim := range p.routedLimits {
		if lim.Load() != nil {
			continue
		}
		ref := model
		if model == p.cfg.Model && p.cfg.ModelConfig != "" {
			ref = p.cfg.ModelConfig
		}
		m, err := p.readFacts(model, ref)
		if err != nil {
			if p.factsWarnedFor.CompareAndSwap(false, true) {
				p.log.Warn("A served model's config.json is not found yet; its checks that need it are skipped until it is", zap.String("model", model), zap.Error(err))
			}
			continue
		}
		lim.Store(m)
	}
}

// readFacts reads the config.json ref locates into the model facts series
// under label, and returns the checks' facts of it.
func (p *Proxy) readFacts(label, ref string) (*modelLimits, error) {
	info, path, err := modelconfig.Load(ref, p.cfg.HFHubCache)
	if err != nil {
		return nil, err
	}
	p.metrics.setModelFacts(label, info)
	p.log.Info("Model facts loaded", zap.String("model", label), zap.String("config", path), zap.Int("max_context", info.MaxContext),
		zap.Int64("kv_bytes_per_token", info.KVBytesPerToken(2)))
	return p.loadLimits(info, path), nil
}

// limitsFor is the checks' facts of model (zero until known).
func (p *Proxy) limitsFor(model string) modelLimits {
	if p.router == nil {
		return p.modelLimits()
	}
	if lim := p.routedLimits[model]; lim != nil {
		if m := lim.Load(); m != nil {
			return *m
		}
	}
	return modelLimits{}
}
