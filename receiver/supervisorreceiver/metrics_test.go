package supervisorreceiver

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/doccheck"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/fleettest"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/metrictest"
)

func TestEmittedMetricsAreThoseDocumented(t *testing.T) {
	documented, err := doccheck.MetadataNames("metadata.yaml")
	require.NoError(t, err)
	md := fleettest.AddRole(buildMetrics(newStatus().snapshot(true, time.Now()), "m", time.Now(), time.Now()), fleet.RoleSupervisor)
	assert.Equal(t, documented, metrictest.Names(md))
	assert.NoError(t, doccheck.CheckMetrics("metadata.yaml", md), "types, help texts and labels are metadata.yaml's")
}

func TestMetricsOfACrashedEngine(t *testing.T) {
	st := newStatus()
	st.crashes[ReasonOOM] = 2
	st.lastReason, st.lastExit = ReasonOOM, -9
	st.restarts = 2
	st.inBackoff, st.backoff = true, 6*time.Second
	st.checks["fail"] = 4
	points := metrictest.Points(t, buildMetrics(st.snapshot(true, time.Now()), "qwen", time.Now(), time.Now()))
	assert.Equal(t, float64(stateBackoff), points["mlx_server_state"])
	assert.Equal(t, 6.0, points["mlx_server_backoff_seconds"])
	assert.Equal(t, 2.0, points["mlx_server_crashes_total{reason=oom}"])
	assert.Equal(t, 0.0, metrictest.Value(t, points, "mlx_server_crashes_total{reason=metal_gpu_error}"))
	assert.Equal(t, 1.0, points["mlx_server_last_crash_reason{reason=oom}"])
	assert.Equal(t, 0.0, metrictest.Value(t, points, "mlx_server_last_crash_reason{reason=exit}"))
	assert.Equal(t, -9.0, points["mlx_server_last_exit_code"])
	assert.Equal(t, 4.0, points["mlx_server_health_checks_total{result=fail}"])
	assert.Equal(t, 0.0, metrictest.Value(t, points, "mlx_server_health_checks_total{result=ok}"))
	assert.Equal(t, 0.0, metrictest.Value(t, points, "mlx_model_loaded{model=qwen}"))
	assert.Equal(t, 2.0, points["mlx_server_restarts_total"])
	assert.Equal(t, 0.0, metrictest.Value(t, points, "mlx_server_log_write_errors_total"))
	assert.Equal(t, 0.0, metrictest.Value(t, points, "mlx_server_health_checks_total{result=skipped}"))
	assert.Len(t, points, 10+len(healthResults)+2*len(crashReasons)-2+1+len(loops))
}
