package supervisorreceiver

import (
	"bytes"
	"context"
	"net/http"
	"time"
)

// A generation thread that /health reports dead. mlx-lm from #1791
// (merged after 0.32.0's version bump, ml-explore/mlx-lm, 2026-08-28) and
// #1837 answers GET /health, and /v1/models, with 503 once its generation
// thread is not alive (ResponseGenerator.is_healthy) and fails the
// completions that wait for it; the process lives on, as before. The
// supervisor restarts it at once, as it does for the same death read
// from the log (threadwatch.go, which is what mlx-lm 0.31.3 offers: its
// /health answers 200 whatever that thread does). Whether the wrapper
// still prints threading.excepthook's "Exception in thread" line is not
// known; either signal restarts the engine, once.

// deadThreadReason names a death /health reported, from the last
// traceback in the log (the thread's, as the wrapper or excepthook
// printed it): a Metal error, memory, a failed model load; any other
// exception is python_error, and so is a 503 with no traceback at all,
// since only an uncaught exception ends that thread.
func deadThreadReason(tail []byte) string {
	text := deathText(tail)
	if i := bytes.LastIndex(text, tracebackLine); i >= 0 {
		text = text[i:]
	}
	for _, r := range crashRules {
		if r.re.Match(text) {
			return r.reason
		}
	}
	return ReasonPythonError
}

// reportHealthDead tells the runner, without waiting.
func (r *runner) reportHealthDead() {
	select {
	case r.healthDead <- struct{}{}:
	default:
	}
}

// drainHealthDead forgets a report about the previous process.
func (r *runner) drainHealthDead() {
	select {
	case <-r.healthDead:
	default:
	}
}

// healthCode asks GET /health within the probe timeout: its status, or
// the error of a request that got none.
func (p *prober) healthCode(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.HealthCheck.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.endpoint("/health"), nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// healthSaysDead records a check whose /health answered 503: not ready, a
// failed check, and in spawn mode a restart now, not after hang_after.
// Called without p.st.mu.
func (p *prober) healthSaysDead() {
	p.st.mu.Lock()
	p.st.checks["fail"]++
	wasReady := p.st.ready
	p.st.ready, p.st.failingFor = false, time.Time{}
	p.st.mu.Unlock()
	if p.onDead != nil {
		p.onDead()
		return
	}
	if wasReady || !p.deadWarned {
		p.deadWarned = true
		p.logger.Error("The engine's /health answers 503: its generation thread is dead; it serves nothing until restarted")
	}
}
