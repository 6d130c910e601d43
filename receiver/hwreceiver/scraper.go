package hwreceiver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/internal/ringhosts"
)

// hwScraper is the receiver's scraper. At every collection_interval it runs
// the fast sources concurrently, each bounded by command_timeout, adds the
// last fresh result of each slow source (run in the background at
// slow_interval) and emits the series.
type hwScraper struct {
	cfg    *Config
	logger *zap.Logger
	opts   emitOptions
	fast   []*source
	slow   *slowLoop

	startTime time.Time
	// lastErr is each source's state at the previous scrape ("" when it
	// worked), so a failure is logged when it starts, not at every scrape.
	lastErr map[string]string
	// readable is whether the last scrape read a source: the hardware
	// role works (internal/fleet).
	readable atomic.Bool
	// agent is the role's, told the node's name once the ring gives it.
	agent *fleet.Agent
}

func newHWScraper(cfg *Config, logger *zap.Logger) *hwScraper {
	procs := newProcMatcher(cfg, os.Getpid())
	fast, slow := platformSources(cfg, newCommandRunner(cfg.CommandTimeout), newCommandRunner(cfg.slowTimeout()), procs)
	return newHWScraperWith(cfg, logger, procs, fast, slow)
}

// newHWScraperWith builds a scraper over the given sources (tests give the
// macOS sources on Linux, or sources that hang).
func newHWScraperWith(cfg *Config, logger *zap.Logger, procs *procMatcher, fast []*source, slow []slowSource) *hwScraper {
	return &hwScraper{
		cfg:    cfg,
		logger: logger,
		opts: emitOptions{
			node:       fleet.NodeName(cfg.Node),
			ring:       cfg.RingInterfaces,
			components: procs.names(),
			worker:     cfg.WorkerComponent,
		},
		fast:    fast,
		slow:    newSlowLoop(slow, cfg.SlowInterval, cfg.slowTimeout(), cfg.staleAfter()),
		lastErr: map[string]string{},
	}
}

func (h *hwScraper) start(ctx context.Context, _ component.Host) error {
	if err := h.startRing(ctx); err != nil {
		return err
	}
	if h.agent != nil {
		h.agent.SetNode(h.opts.node)
	}
	h.startTime = time.Now()
	h.slow.start()
	return nil
}

// startRing reads ring_hostfile: the node is named by its rank, and the
// ring interfaces are found by their ring addresses. An unreadable or
// malformed hostfile is a configuration error: the collector does not
// start.
func (h *hwScraper) startRing(ctx context.Context) error {
	if h.cfg.RingHostfile == "" {
		return nil
	}
	hf, err := ringhosts.Read(h.cfg.RingHostfile)
	if err != nil {
		return fmt.Errorf("ring_hostfile: %w", err)
	}
	rank, ok, err := localRank(ctx, hf)
	switch {
	case err != nil:
		h.logger.Warn("Cannot tell this node's rank in the ring", zap.Error(err))
	case !ok:
		h.logger.Warn("No interface of this host holds a ring address of the hostfile: the node keeps its name, and mlx_net_* is empty until one does",
			zap.String("ring_hostfile", h.cfg.RingHostfile), zap.String("node", h.opts.node))
	case h.cfg.Node == "":
		h.opts.node = ringhosts.NodeName(rank)
	}
	if len(h.cfg.RingInterfaces) == 0 {
		h.fast = append(h.fast, &source{name: "ring_hostfile", collect: ringHostfileSource(hf)})
	}
	return nil
}

func (h *hwScraper) shutdown(ctx context.Context) error {
	return h.slow.stop(ctx)
}

func (h *hwScraper) scrape(ctx context.Context) (pmetric.Metrics, error) {
	if h.startTime.IsZero() {
		h.startTime = time.Now()
	}
	s := newSample()
	reports := map[string]error{}
	for _, r := range runSources(ctx, h.fast, h.cfg.CommandTimeout) {
		if errors.Is(r.err, errNotApplicable) {
			continue
		}
		reports[r.name] = r.err
		if r.err == nil {
			r.apply(s)
		}
	}
	now := time.Now()
	for name, err := range h.slow.results(s, now) {
		reports[name] = err
	}
	readable := false
	for name, err := range reports {
		s.sources[name] = err == nil
		readable = readable || err == nil
	}
	h.readable.Store(readable)
	// With a hostfile, the ring is the interfaces holding a ring address,
	// and none while no interface does: not the platform's guess (on
	// Linux, every interface).
	if err, ok := reports["ring_hostfile"]; ok && err != nil {
		s.ringDefault = nil
	}
	h.logChanges(reports)
	// A failing source is no scrape error: mlx_hw_source_up carries it, and
	// an error here would be logged by the scraper controller at every
	// collection.
	return buildMetrics(s, h.opts, h.startTime, now), nil
}

// logChanges logs a source that starts failing, with why, and one that
// recovers.
func (h *hwScraper) logChanges(reports map[string]error) {
	for _, name := range sortedKeys(reports) {
		err := reports[name]
		prev, seen := h.lastErr[name]
		switch {
		case err != nil && (!seen || prev == ""):
			h.logger.Warn("Hardware source failed; its series are not emitted until it works", zap.String("source", name), zap.Error(err))
			h.lastErr[name] = err.Error()
		case err == nil && seen && prev != "":
			h.logger.Info("Hardware source works again", zap.String("source", name))
			h.lastErr[name] = ""
		case err == nil:
			h.lastErr[name] = ""
		}
	}
}
