// Package e2e holds the end-to-end tests: they run the collector binary
// that `make build` made (MLX_OTELCOL) with the shipped configs, the
// simulated engine (MLXSIM) in place of mlx_lm.server, and talk to both over
// loopback HTTP. They carry the e2e build tag; `make e2e` (part of
// `make test`) builds both binaries and runs them.
package e2e
