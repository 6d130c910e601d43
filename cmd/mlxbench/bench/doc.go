// Package bench is the measuring side of cmd/mlxbench: it sends chat
// completions to any OpenAI-compatible endpoint, times them from their
// scheduled start, and turns the samples into the summaries, reports and
// comparisons the subcommands print.
//
// What is pure (and table-tested) lives in its own file: percentiles
// (stats.go), SSE framing (sse.go), chunk decoding (chunk.go), arrival
// schedules (schedule.go), error causes (cause.go), summaries (summary.go)
// and comparisons (compare.go). The loops that send requests (closedloop.go,
// openloop.go, interleave.go) are bounded in time and count, and stop when
// their context is cancelled.
package bench
