// Package fleet is the contract every role of the collector reports by, so
// that a fleet of nodes can be read with one set of queries:
//
//	mlx_agent_up{role,node}                                        1 / 0
//	mlx_agent_info{role,node,version,commit,model,model_path}      1
//	mlx_agent_uptime_seconds{role,node}
//	mlx_agent_restarts_total{role,node}
//	mlx_agent_crashes_total{role,node}   the restarts after no clean stop
//
// Each role serves its own series on its own port (the proxy through its
// client_golang registry, Collector; the receivers through their prometheus
// exporters, package fleet/fleetmetrics), once per role and node. Every
// series of those ports also carries node (Node).
//
// # Roles, and what up and degraded mean
//
// up says the agent itself works; degraded says it works but what it
// watches or serves does not. "down" (up 0) and "no data" (nothing arrived
// for 3 minutes: the node, the collector or the network is gone) are
// different states, and degraded is only read where up is 1.
//
//	role         up = 1 when                              degraded when (PromQL, per node)
//	proxy        it is listening and serving               the engine it relays to is not ready: mlx_up == 0
//	hardware     the last scrape read its sources           a source fails: mlx_hw_source_up == 0
//	kvcache      the engine's log was readable last time   (none: what it reads is the log, and up says that)
//	supervisor   its supervision loop runs                 the engine is not ready: mlx_server_ready == 0
//	logpipeline  the log classification processor runs    a sink loses records: increase(mlx_log_tailer_dropped_total{reason=~"queue_full|export_failed"}[5m]) > 0
//	judge        its loop runs                             its reads or writes fail: increase(mlx_judge_passes_total{result=~"read_failed|write_failed|panicked"}[15m]) > 0
//
// The recording rule mlx:agent_degraded (rules/mlx-fleet.yml) holds the
// right-hand column; docs/fleet.md says the same for people.
//
// # Restarts and crashes
//
// A role's starts are kept in a small file per role in a state directory
// (the collector's data directory, agents/), so they survive the
// collector's own restart: launchd's KeepAlive and systemd's Restart
// restart a crashing collector within seconds, and without a counter a
// crash loop looks up on most scrapes. At start the file is marked
// running; a clean stop clears the mark. A start that finds the mark left
// counts a crash (kill -9, a panic, the power gone) besides the restart.
//
// The package has no collector types: the proxy uses it as it is.
package fleet

// The roles, the values of the role label.
const (
	RoleProxy       = "proxy"
	RoleHardware    = "hardware"
	RoleKVCache     = "kvcache"
	RoleSupervisor  = "supervisor"
	RoleLogPipeline = "logpipeline"
	RoleJudge       = "judge"
)

// Roles lists every role, in the order the docs give them.
var Roles = []string{RoleProxy, RoleHardware, RoleKVCache, RoleSupervisor, RoleLogPipeline, RoleJudge}

// The contract's series and their help texts. Every component that runs a
// role lists them in its metadata.yaml with these texts (fleet_test.go
// holds them to it).
const (
	MetricUp       = "mlx_agent_up"
	MetricInfo     = "mlx_agent_info"
	MetricUptime   = "mlx_agent_uptime_seconds"
	MetricRestarts = "mlx_agent_restarts_total"
	MetricCrashes  = "mlx_agent_crashes_total"

	HelpUp       = "1 while this role of the collector works (docs/fleet.md says what that is per role), else 0."
	HelpInfo     = "Always 1: the build, version and model of this role of the collector."
	HelpUptime   = "Seconds since this role of the collector started."
	HelpRestarts = "Starts of this role after its first, across collector restarts (kept in the state directory)."
	HelpCrashes  = "Restarts of this role whose previous run ended without a clean stop (killed, crashed, power lost)."
)

// The labels of the series.
const (
	LabelRole      = "role"
	LabelNode      = "node"
	LabelVersion   = "version"
	LabelCommit    = "commit"
	LabelModel     = "model"
	LabelModelPath = "model_path"
)
