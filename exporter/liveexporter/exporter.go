package liveexporter

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"
)

// dropCounter is what the mlx_proxy extension offers: its count of lost
// live records.
type dropCounter interface {
	CountLiveDrops(reason string, n int)
}

// exportFailed is the reason label of the records a POST lost.
const exportFailed = "export_failed"

type liveExporter struct {
	cfg    *Config
	client exporter.Logs
	log    *zap.Logger
	drops  dropCounter

	mu       sync.Mutex
	lastWarn time.Time
	unwarned int // records lost since the last warning
}

func (e *liveExporter) start(ctx context.Context, host component.Host) error {
	ext, ok := host.GetExtensions()[e.cfg.Extension]
	if !ok {
		return fmt.Errorf("mlx_live: extension %q is not running (add it to service.extensions)", e.cfg.Extension)
	}
	if e.drops, ok = ext.(dropCounter); !ok {
		return fmt.Errorf("mlx_live: extension %q is not an mlx_proxy extension", e.cfg.Extension)
	}
	return e.client.Start(ctx, host)
}

// push POSTs one batch. A failed POST loses the batch: it is counted and
// warned about at most once a minute, and the pipeline goes on.
func (e *liveExporter) push(ctx context.Context, ld plog.Logs) error {
	err := e.client.ConsumeLogs(ctx, ld)
	if err == nil {
		return nil
	}
	n := ld.LogRecordCount()
	e.drops.CountLiveDrops(exportFailed, n)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.unwarned += n
	if now := time.Now(); now.Sub(e.lastWarn) >= warnEvery {
		e.log.Warn("Live records not delivered; dropped", zap.Int("records", e.unwarned), zap.Error(err))
		e.lastWarn, e.unwarned = now, 0
	}
	return nil
}

// warnEvery bounds the warnings about lost records.
const warnEvery = time.Minute
