package preflight

import (
	"fmt"
	"slices"
)

// proxyType is the mlx_proxy extension's type.
const proxyType = "mlx_proxy"

// checkModels: the model the proxy lets requests name is the one the
// engine serves. The proxy passes a request for its `model` (and
// `served_models`) on, and mlx_lm unloads the model it was started with
// (--model in the supervisor's command) to load the one a request names:
// with the two apart, every request would reload a model (mlx_lm v0.31.3
// server.py, ModelProvider.load).
// An engine started without --model, a proxy without a model, or
// served_models "*" leaves nothing to compare.
func checkModels(conf map[string]any) []error {
	var engineModels []string
	var from string
	for _, e := range Engines(conf) {
		if ms := flagValues(e.Command, "--model"); len(ms) > 0 {
			engineModels = append(engineModels, ms[len(ms)-1])
			from = e.Component
		}
	}
	if len(engineModels) != 1 {
		return nil // none, or several engines: no one model to hold the proxy to
	}
	engine := engineModels[0]
	var errs []error
	for _, id := range usedIDs(conf, "extensions") {
		if componentType(id) != proxyType {
			continue
		}
		cfg, _ := lookup(conf, "extensions::"+id)
		model, _ := lookupString(cfg, "model")
		served := stringList(mustLookup(cfg, "served_models"))
		if model == "" || slices.Contains(served, "*") {
			continue
		}
		if len(served) == 0 {
			served = []string{model}
		}
		if !slices.Contains(served, engine) {
			errs = append(errs, fmt.Errorf("extensions::%s: model %q (served_models %q) is not the engine's --model %q (%s): every request would make mlx_lm unload its model to load another; set both from MLX_MODEL",
				id, model, served, engine, from))
		}
	}
	return errs
}
