// Package agent is the agentic rig (bench_agentic.py's successor): agent
// loops that stream chat completions with tools, run the model's tool
// calls against a deterministic local registry, and re-send the whole
// transcript each turn until the model answers or the turn budget is
// spent. What a scenario asks and which answer is right is fixed, so two
// runs compare.
package agent
