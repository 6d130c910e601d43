package judgereceiver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/receiver"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/internal/judge"
	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
)

// proxySource is what the mlx_proxy extension offers the judge.
type proxySource interface {
	BaseURL() (string, error)
	InFlight() int64
}

// judgeLoop is the one loop of an mlx_judge receiver, shared by its logs
// receiver (the evaluation events) and its metrics receiver (the
// mlx_judge_* series): the first to start runs it, the last to shut down
// stops it.
type judgeLoop struct {
	cfg   *Config
	set   receiver.Settings
	stats *stats
	start time.Time

	mu     sync.Mutex
	logs   consumer.Logs
	refs   int
	cancel context.CancelFunc
	done   chan struct{}
}

var (
	loopsMu sync.Mutex
	loops   = map[*Config]*judgeLoop{}
)

// loopFor returns the receiver's loop, made on first use. The collector
// hands every pipeline of one receiver id the same *Config.
func loopFor(cfg *Config, set receiver.Settings) *judgeLoop {
	loopsMu.Lock()
	defer loopsMu.Unlock()
	l, ok := loops[cfg]
	if !ok {
		l = &judgeLoop{cfg: cfg, set: set, stats: newStats(cfg.Models), start: time.Now()}
		loops[cfg] = l
	}
	return l
}

func (l *judgeLoop) setLogs(next consumer.Logs) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.logs = next
}

// Start starts the loop on its first call.
func (l *judgeLoop) Start(_ context.Context, host component.Host) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refs++
	if l.refs > 1 {
		return nil
	}
	loop, err := l.build(host)
	if err != nil {
		l.refs--
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel, l.done = cancel, make(chan struct{})
	go l.run(ctx, loop, l.done)
	l.set.Logger.Info("Judge loop started", zap.String("source", l.cfg.source()), zap.Duration("interval", l.cfg.Interval),
		zap.Int("limit", l.cfg.Limit), zap.Bool("dry_run", l.cfg.DryRun), zap.Bool("opik_scores", loop.Scores != nil))
	return nil
}

// running says whether the loop runs: the judge role works
// (internal/fleet).
func (l *judgeLoop) running() bool {
	l.mu.Lock()
	done := l.done
	l.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Shutdown stops the loop on the last call; a judgement in progress is
// cut. Safe without Start.
func (l *judgeLoop) Shutdown(ctx context.Context) error {
	l.mu.Lock()
	if l.refs == 0 {
		l.mu.Unlock()
		return nil
	}
	l.refs--
	if l.refs > 0 {
		l.mu.Unlock()
		return nil
	}
	cancel, done := l.cancel, l.done
	l.cancel, l.done = nil, nil
	l.mu.Unlock()
	loopsMu.Lock()
	delete(loops, l.cfg)
	loopsMu.Unlock()
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// build assembles the loop from the configuration and the extension.
func (l *judgeLoop) build(host component.Host) (*judge.Loop, error) {
	c := l.cfg
	var proxy proxySource
	if c.Judge.Extension.Type().String() != "" {
		ext, ok := host.GetExtensions()[c.Judge.Extension]
		if ok {
			proxy, _ = ext.(proxySource)
		}
		if proxy == nil && c.Judge.Endpoint == "" {
			return nil, fmt.Errorf("mlx_judge: extension %q is not a running mlx_proxy (add it to service.extensions, or set judge.endpoint)", c.Judge.Extension)
		}
	}
	endpoint := c.Judge.Endpoint
	var viaProxy []judge.Option
	if endpoint == "" {
		u, err := proxy.BaseURL()
		if err != nil {
			return nil, fmt.Errorf("mlx_judge: %w", err)
		}
		endpoint = u
		if strings.HasPrefix(u, "https://") {
			// The proxy's own listener, over loopback, with the
			// operator's certificate for the LAN's name: this process
			// talking to itself, where the name cannot match.
			viaProxy = append(viaProxy, judge.WithHTTPClient(&http.Client{Transport: &http.Transport{
				TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback to ourselves
			}}))
		}
	}
	client := judge.NewClient(endpoint, c.Judge.Model, string(c.Judge.APIKey), c.Judge.Timeout, viaProxy...)
	client.ThinkingOff, client.MaxTokens = c.Judge.thinkingOff(), c.Judge.MaxTokens
	loop := &judge.Loop{
		Settings: judge.Settings{Limit: c.Limit, Scores: c.scoreNames(), Prompt: c.prompt(), Project: c.Opik.Project,
			DryRun: c.DryRun, MaxInFlight: c.Judge.MaxInFlight, Remember: 100 * c.Limit,
			Filter: c.filter(), SampleRate: c.SamplingRate, MaxPerMinute: c.MaxPerMinute, Reason: c.reason()},
		Judge: client,
	}
	if proxy != nil {
		loop.InFlight = func() (int64, error) { return proxy.InFlight(), nil }
	}
	var api *opikapi.Client
	if c.Opik.Endpoint != "" {
		api = &opikapi.Client{Base: c.Opik.Endpoint, APIKey: string(c.Opik.APIKey), Workspace: c.Opik.Workspace,
			Project: c.Opik.Project, HTTP: &http.Client{Timeout: c.Opik.Timeout}}
		loop.Scores = api
	}
	if c.source() == sourceOpik {
		loop.Source = judge.OpikSource{API: api}
	} else {
		loop.Source = judge.JaegerSource{Endpoint: c.Jaeger.Endpoint, Service: c.Jaeger.Service, Lookback: c.Jaeger.Lookback,
			HTTP: &http.Client{Timeout: c.Jaeger.Timeout}}
	}
	return loop, nil
}

// run makes a pass every interval until ctx ends.
func (l *judgeLoop) run(ctx context.Context, loop *judge.Loop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(l.cfg.Interval)
	defer t.Stop()
	var lastReadErr string
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		p, ok := l.pass(ctx, loop)
		if !ok || ctx.Err() != nil {
			continue
		}
		lastReadErr = l.report(&p, lastReadErr)
	}
}

// pass runs one pass; a panic in it is logged and counted, and the loop
// goes on.
func (l *judgeLoop) pass(ctx context.Context, loop *judge.Loop) (p judge.Pass, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			l.stats.panicked()
			l.set.Logger.Error("Judge pass panicked; the loop goes on", zap.Any("panic", r), zap.Stack("stack"))
			ok = false
		}
	}()
	return loop.Run(ctx), true
}

// report counts a pass, emits its events and logs what a user needs:
// scores written, and source errors when they start and end (not every
// 10 s).
func (l *judgeLoop) report(p *judge.Pass, lastReadErr string) string {
	l.stats.record(p)
	log := l.set.Logger
	if p.ReadErr != nil {
		if msg := p.ReadErr.Error(); msg != lastReadErr {
			log.Warn("Judge loop cannot read traces; it tries again every interval", zap.Error(p.ReadErr))
			return msg
		}
		return lastReadErr
	}
	if lastReadErr != "" {
		log.Info("Judge loop reads traces again")
	}
	if p.WriteErr != nil {
		log.Warn("Judge scores not written to Opik; the traces are judged again next pass", zap.Error(p.WriteErr))
	}
	for _, j := range p.Judgements {
		if j.Err != nil {
			log.Debug("Trace not judged", zap.String("result", j.Result), zap.String("opik_id", j.Candidate.OpikID), zap.Error(j.Err))
		}
	}
	if n := p.Count(judge.ResultScored); n > 0 || p.Count(judge.ResultParseFailed)+p.Count(judge.ResultJudgeError) > 0 {
		log.Info("Judge pass", zap.Int("scored", n), zap.Int("parse_failed", p.Count(judge.ResultParseFailed)),
			zap.Int("judge_error", p.Count(judge.ResultJudgeError)), zap.Int("skipped", p.Count(judge.ResultSkipped)),
			zap.Int("scores_written", p.Written), zap.Bool("dry_run", l.cfg.DryRun))
	}
	l.mu.Lock()
	next := l.logs
	l.mu.Unlock()
	if next == nil || l.cfg.DryRun || p.Count(judge.ResultScored) == 0 {
		return ""
	}
	// The pipeline's own context: the loop's is cancelled at shutdown,
	// and the events of a finished pass are worth handing on.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := next.ConsumeLogs(ctx, evaluationEvents(p, l.cfg.scoreNames(), l.cfg.Judge.Model, l.cfg.reason(), time.Now())); err != nil && !errors.Is(err, context.Canceled) {
		log.Warn("Evaluation events not taken by the logs pipeline", zap.Error(err))
	}
	return ""
}
