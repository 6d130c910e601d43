package main

import (
	"context"
	"fmt"
	"io"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
)

// dashboardName is the original's Opik dashboard (tools/opik_dashboards.py).
const dashboardName = "mlx: serving health & quality"

func provision(ctx context.Context, api *opikapi.Client, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "mlxjudge: --provision-dashboard is not built yet")
	return 1
}
