package supervisorreceiver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"
)

// userAgent marks the supervisor's own requests in the engine's logs.
const userAgent = "mlx-otelcol-supervisor"

// prober runs the health checks: readiness while the engine starts, then
// one check per interval, counted by result.
type prober struct {
	cfg    *Config
	logger *zap.Logger
	st     *status
	client *http.Client
	model  string
	// onHung is called when a ready engine has failed every probe for
	// hang_after; nil in attach mode, where there is nothing to restart.
	onHung func()
	// onDead is called when /health answers 503, mlx-lm's word (#1791)
	// for a dead generation thread (deadthread.go); nil in attach mode.
	onDead func()
	// deadWarned: attach mode has logged the current 503 streak.
	deadWarned bool
	// proxyActivity, when set, is when the proxy last relayed engine
	// stream bytes.
	proxyActivity func() time.Time
	// proxyAnswer, when set, is when the proxy last relayed a whole
	// successful answer of the engine.
	proxyAnswer func() time.Time
	// inFlight, when set, is how many completion requests the proxy is
	// serving: a request waiting for the engine, streamed or not, is work
	// the engine has (mlx_lm prints nothing while it decodes, and a
	// non-streamed answer relays no byte before its end).
	inFlight func() int64
	// busyWarned: the current failing streak has been logged as busy.
	busyWarned bool
	// readySink, when set, hears whether the engine is ready, on every
	// change (the proxy routes no request to an engine not ready: a
	// wedged generation thread leaves mlx_lm v0.31.3's /health at 200).
	readySink func(endpoint string, ready bool)
	// reported is what readySink last heard (nil: nothing yet).
	reported *bool
	// pending is the probe still waiting for the engine, if any. A probe
	// that times out is not abandoned: mlx_lm's handler thread would stay
	// blocked for ever in response_queue.get() whatever the client does,
	// so one more probe per interval would pile up threads in a wedged
	// engine. The next check waits for the same probe instead; at most one
	// is ever in flight.
	pending chan error
}

func (p *prober) run(ctx context.Context) {
	for {
		p.st.mu.Lock()
		spawnedDown := p.cfg.SpawnMode() && !p.st.procUp
		p.st.mu.Unlock()
		if !spawnedDown {
			p.check(ctx)
		}
		p.reportReady()
		// The wait follows what this check found: a first success moves to
		// the slower interval at once.
		p.st.mu.Lock()
		wait := p.cfg.HealthCheck.Interval
		if !p.st.ready {
			wait = p.cfg.HealthCheck.StartupInterval
		}
		p.st.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-p.st.started:
			t.Stop()
		}
	}
}

// check runs one probe and records what it found. While the engine is
// ready and has answered a user through the proxy within the interval, the
// probe is skipped (result "skipped"): that answer proved it ready, and a
// completion probe would cost the engine a generation.
func (p *prober) check(ctx context.Context) {
	now := time.Now()
	if p.proxyAnswer != nil {
		answered := p.proxyAnswer()
		p.st.mu.Lock()
		if p.st.ready && now.Sub(answered) < p.cfg.HealthCheck.Interval {
			p.st.checks["skipped"]++
			p.st.failingFor = time.Time{}
			p.st.mu.Unlock()
			return
		}
		p.st.mu.Unlock()
	}
	// /health never waits for the generation thread; from mlx-lm #1791 on
	// a 503 says that thread is dead, and no probe need wait for it.
	code, herr := p.healthCode(ctx)
	if ctx.Err() != nil {
		return
	}
	httpUp := p.cfg.SpawnMode() || herr == nil && (code == http.StatusOK || code == http.StatusServiceUnavailable)
	if code == http.StatusServiceUnavailable {
		p.st.mu.Lock()
		if !p.cfg.SpawnMode() {
			if !p.st.httpUp {
				p.st.httpSince = now
			}
			p.st.httpUp = true
		}
		p.st.mu.Unlock()
		p.healthSaysDead()
		return
	}
	err := p.probeOnce(ctx)
	if ctx.Err() != nil {
		return // shutting down: not a result
	}
	// Requests in flight through the proxy are progress while the engine's
	// HTTP side answers (/health does not wait for the generation thread;
	// an engine that does not even answer it is not busy but stuck).
	busy := err != nil && p.inFlight != nil && p.inFlight() > 0 && p.get(ctx, "/health", nil) == nil
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	if !p.cfg.SpawnMode() {
		if httpUp && !p.st.httpUp {
			p.st.httpSince = now
		}
		p.st.httpUp = httpUp
	}
	if err == nil {
		p.deadWarned = false
		p.st.checks["ok"]++
		p.st.ready, p.st.readyOnce, p.st.failingFor = true, true, time.Time{}
		return
	}
	p.st.checks["fail"]++
	if p.st.ready {
		p.logger.Warn("Engine health check failed", zap.Error(err))
	}
	p.st.ready = false
	if !p.st.readyOnce || p.onHung == nil || p.cfg.HealthCheck.HangAfter == 0 {
		return
	}
	if p.st.failingFor.IsZero() {
		p.st.failingFor, p.busyWarned = now, false
		return
	}
	if now.Sub(p.st.failingFor) < p.cfg.HealthCheck.HangAfter {
		return
	}
	// The last probe that passed came just before the failing streak.
	progress := p.lastProgress()
	if p.st.failingFor.After(progress) {
		progress = p.st.failingFor
	}
	// Requests waiting in the proxy while /health answers are the work the
	// probe queues behind, but they are also what a wedged generation
	// thread looks like from outside (mlx_lm's HTTP threads answer /health
	// whatever that thread does, and a non-streamed answer is silent until
	// its end). So they excuse silence up to busy_limit only: past it,
	// with no line of the generation thread, no stream byte and no answer,
	// the engine is hung even under load.
	allowed := p.cfg.HealthCheck.HangAfter
	if busy {
		allowed = max(allowed, p.cfg.HealthCheck.BusyLimit)
	}
	if now.Sub(progress) < allowed {
		// Busy, not hung: the probe waits on a generation thread that is
		// doing work.
		if !p.busyWarned {
			p.busyWarned = true
			p.logger.Warn("Engine health checks fail but it makes progress; not restarting it",
				zap.Duration("failing_for", now.Sub(p.st.failingFor)), zap.Duration("progress_ago", now.Sub(progress)))
		}
		return
	}
	p.logger.Error("Engine stopped answering and shows no progress; restarting it", zap.Duration("failing_for", now.Sub(p.st.failingFor)))
	p.st.failingFor = time.Time{}
	p.st.readyOnce = false
	go p.onHung()
}

// lastProgress is the latest sign of life besides the probe: a line of
// the engine's output, or stream bytes through the proxy. Called with
// p.st.mu held.
func (p *prober) lastProgress() time.Time {
	t := time.Unix(0, p.st.lastOutput.Load())
	for _, src := range []func() time.Time{p.proxyActivity, p.proxyAnswer} {
		if src == nil {
			continue
		}
		if a := src(); a.After(t) {
			t = a
		}
	}
	return t
}

// probeOnce waits up to the probe timeout for the pending probe, starting
// one if none is pending. A probe that outlives the timeout is a failure
// of this check and stays pending; its answer counts for a later check.
func (p *prober) probeOnce(ctx context.Context) error {
	if p.pending == nil {
		done := make(chan error, 1)
		p.pending = done
		// Bounded all the same: a probe that no answer ends is given up
		// after pendingLimit, so an engine that drops a connection silently
		// cannot stop probing for good.
		pctx, cancel := context.WithTimeout(ctx, p.pendingLimit())
		go func() {
			defer cancel()
			defer func() {
				if r := recover(); r != nil {
					done <- fmt.Errorf("probe panicked: %v", r)
				}
			}()
			done <- p.probe(pctx)
		}()
	}
	t := time.NewTimer(p.cfg.HealthCheck.Timeout)
	defer t.Stop()
	select {
	case err := <-p.pending:
		p.pending = nil
		return err
	case <-t.C:
		return fmt.Errorf("no answer within %s (the probe keeps waiting; no other is sent meanwhile)", p.cfg.HealthCheck.Timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// pendingLimit is how long one probe may stay pending.
func (p *prober) pendingLimit() time.Duration {
	return max(p.cfg.StartupTimeout, p.cfg.HealthCheck.HangAfter, 10*p.cfg.HealthCheck.Timeout)
}

func (p *prober) probe(ctx context.Context) error {
	switch p.cfg.HealthCheck.Probe {
	case ProbeHealth:
		return p.get(ctx, "/health", nil)
	case ProbeModels:
		var body struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := p.get(ctx, "/v1/models", &body); err != nil {
			return err
		}
		for _, m := range body.Data {
			// Without a configured model any listed one will do.
			if listedAs(m.ID, p.model) || p.model == defaultModel {
				return nil
			}
		}
		return fmt.Errorf("model %q is not listed by /v1/models", p.model)
	default:
		return p.completion(ctx)
	}
}

// completion asks for one token: it only succeeds once the model is loaded
// and the generation loop answers, unlike /health and /v1/models.
//
// It names the model "default_model", mlx_lm's name for its --model with
// its --adapter-path and --draft-model, and what the proxy sends for a
// request without a model and the judge sends by default. mlx_lm batches a
// request only with requests of the same model description as written
// (mlx_lm v0.31.3 server.py, ResponseGenerator._generate:
// `current_model == args.model`) and drains its whole batch before serving
// another (drain_batch, which stops it taking requests): a probe naming the
// repo id would wait for every running generation and hold back every
// later request; at mlx_lm d78bf58e (0.32.0 dev) it would also reload the
// model without its adapter (ModelProvider.load keys the default model by
// its adapter, the probe's name by none).
func (p *prober) completion(ctx context.Context) error {
	req := map[string]any{
		"messages":   []map[string]string{{"role": "user", "content": "ping"}},
		"max_tokens": 1,
		"stream":     false,
		"model":      defaultModel,
	}
	b, _ := json.Marshal(req)
	var body struct {
		Choices []json.RawMessage `json:"choices"`
	}
	if err := p.do(ctx, http.MethodPost, "/v1/chat/completions", b, &body); err != nil {
		return err
	}
	if len(body.Choices) == 0 {
		return fmt.Errorf("completion probe: no choices in the answer")
	}
	return nil
}

// get asks a route that does not wait for the generation thread, within
// the probe timeout.
func (p *prober) get(ctx context.Context, path string, into any) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.HealthCheck.Timeout)
	defer cancel()
	return p.do(ctx, http.MethodGet, path, nil, into)
}

// do sends one request; ctx bounds it.
func (p *prober) do(ctx context.Context, method, path string, body []byte, into any) error {
	req, err := http.NewRequestWithContext(ctx, method, p.endpoint(path), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", userAgent)
	// The probe asks the engine itself; should its endpoint be a proxy's,
	// the proxy counts it as a probe, not a user (proxy/origin.go).
	req.Header.Set("X-Mlx-Origin", "probe")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d", method, path, resp.StatusCode)
	}
	if into != nil {
		if err := json.Unmarshal(data, into); err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
	}
	return nil
}

// endpoint is the engine's URL of path.
func (p *prober) endpoint(path string) string {
	return strings.TrimRight(p.cfg.Endpoint, "/") + path
}

// listedAs says whether /v1/models lists the engine's --model as id.
// mlx_lm lists a repo id as itself, but a local --model as its resolved
// absolute path (mlx_lm v0.31.3 server.py, handle_models_request:
// str(model_path.resolve())), so "./models/qwen" is listed as
// "/Users/me/models/qwen".
// The path is resolved here when it exists (the spawned engine shares the
// collector's working directory); for an engine elsewhere (attach mode)
// an absolute id ending in the path will do.
func listedAs(id, model string) bool {
	if id == model {
		return true
	}
	if !filepath.IsAbs(id) {
		return false
	}
	if abs, err := filepath.Abs(model); err == nil {
		if r, err := filepath.EvalSymlinks(abs); err == nil && r == id {
			return true
		}
		if abs == id {
			return true
		}
	}
	rel := strings.TrimPrefix(filepath.Clean(model), "/")
	return rel != "." && strings.HasSuffix(id, "/"+rel)
}

// reportReady tells readySink the engine's readiness when it changed.
func (p *prober) reportReady() {
	if p.readySink == nil {
		return
	}
	p.st.mu.Lock()
	ready := p.st.ready
	p.st.mu.Unlock()
	if p.reported != nil && *p.reported == ready {
		return
	}
	p.reported = &ready
	p.readySink(p.cfg.Endpoint, ready)
}
