package preflight

import (
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mlx-otelcol/mlx-otelcol/receiver/supervisorreceiver"
)

// Listener is one address the configuration has the collector listen on.
type Listener struct {
	// Component is the configuration path of what listens:
	// "exporters::prometheus/hw", "service::telemetry::metrics".
	Component string
	// Key says which of its settings gives the address: "endpoint",
	// "protocols::grpc::endpoint", "readers[0] pull prometheus".
	Key string
	// Endpoint is host:port.
	Endpoint string
	// Default: the address is the component's default, not written in the
	// configuration.
	Default bool
	// RunFile, for the engine's own port, is the supervisor's run record:
	// a live engine recorded there (one a killed collector left) holds
	// the port until the supervisor ends it, so the port is not checked.
	RunFile string
}

func (l Listener) describe() string {
	d := ""
	if l.Default {
		d = ", its default"
	}
	return fmt.Sprintf("%s (%s: %s%s)", l.Component, l.Key, l.Endpoint, d)
}

// listenKey is a setting of a component type that is an address it
// listens on.
type listenKey struct {
	// key is the setting's path in the component's config, "::"-separated.
	key string
	// def is the component's default when the setting is absent; "" when
	// the component has none (no listener without the setting).
	def string
	// section, when set, must be present for the listener to exist (the
	// otlp receiver listens on gRPC only when protocols::grpc is there).
	section string
}

// listenerKeys are the component types of this distribution that listen,
// with the settings that say where. Any other component's endpoint is a
// destination it connects to (otlp_grpc/jaeger, mlx_otlp_http, opik, the
// judge's jaeger) and is not checked. The defaults are the components'
// own: otlpreceiver's generated_config.go, healthcheckextension's and
// pprofextension's factory.go, proxyextension's factory.go (a test holds
// the last to it).
var listenerKeys = map[string]map[string][]listenKey{
	"receivers": {
		"otlp": {
			{key: "protocols::grpc::endpoint", def: "localhost:4317", section: "protocols::grpc"},
			{key: "protocols::http::endpoint", def: "localhost:4318", section: "protocols::http"},
		},
	},
	"exporters": {
		"prometheus": {{key: "endpoint"}},
	},
	"extensions": {
		"health_check": {{key: "endpoint", def: "localhost:13133"}},
		"pprof":        {{key: "endpoint", def: "localhost:1777"}},
		"mlx_proxy":    {{key: "endpoint", def: "0.0.0.0:8080"}, {key: "metrics_endpoint"}},
	},
}

// supervisorType is the receiver that runs the engine.
const supervisorType = "mlx_supervisor"

// Listeners lists the addresses the resolved configuration (as
// confmap.Conf.ToStringMap gives it) has the collector listen on: those of
// the components the service uses (in service::extensions or a pipeline),
// the engine's --port when a supervisor runs it, and the pull reader of the
// collector's own metrics. Sorted by component, then key.
func Listeners(conf map[string]any) []Listener {
	var out []Listener
	for _, kind := range []string{"extensions", "receivers", "exporters"} {
		for _, id := range usedIDs(conf, kind) {
			keys := listenerKeys[kind][componentType(id)]
			cfg, _ := lookup(conf, kind+"::"+id)
			for _, k := range keys {
				if l, ok := listenerOf(cfg, k); ok {
					l.Component = kind + "::" + id
					out = append(out, l)
				}
			}
		}
	}
	for _, e := range Engines(conf) {
		if l, ok := e.listener(); ok {
			out = append(out, l)
		}
	}
	out = append(out, telemetryListeners(conf)...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Component < out[j].Component })
	return out
}

// listenerOf reads one listen key of a component's config (nil when the
// component is configured with no settings).
func listenerOf(cfg any, k listenKey) (Listener, bool) {
	if k.section != "" {
		if _, ok := lookup(cfg, k.section); !ok {
			return Listener{}, false
		}
	}
	// A Unix socket (transport: unix) is no port.
	parent := ""
	if i := strings.LastIndex(k.key, "::"); i >= 0 {
		parent = k.key[:i+2]
	}
	if t, ok := lookupString(cfg, parent+"transport"); ok && t != "" && !strings.HasPrefix(t, "tcp") {
		return Listener{}, false
	}
	if v, ok := lookupString(cfg, k.key); ok && v != "" {
		return Listener{Key: k.key, Endpoint: v}, true
	}
	if k.def == "" {
		return Listener{}, false
	}
	return Listener{Key: k.key, Endpoint: k.def, Default: true}, true
}

// telemetryListeners are the pull readers of the collector's own metrics:
// the configured ones, or the default localhost:8888 when there are none;
// none at level none.
func telemetryListeners(conf map[string]any) []Listener {
	const component = "service::telemetry::metrics"
	metrics, _ := lookup(conf, component)
	if level, ok := lookupString(metrics, "level"); ok && strings.EqualFold(level, "none") {
		return nil
	}
	readers, ok := lookup(metrics, "readers")
	if !ok || readers == nil {
		return []Listener{{Component: component, Key: "the default reader", Endpoint: "localhost:8888", Default: true}}
	}
	list, _ := readers.([]any)
	var out []Listener
	for i, r := range list {
		prom, ok := lookup(r, "pull::exporter::prometheus")
		if !ok {
			continue
		}
		port, ok := lookupString(prom, "port")
		if !ok || port == "" {
			continue
		}
		host, ok := lookupString(prom, "host")
		if !ok || host == "" {
			host = "localhost"
		}
		out = append(out, Listener{Component: component, Key: fmt.Sprintf("readers[%d] pull prometheus", i), Endpoint: net.JoinHostPort(host, port)})
	}
	return out
}

// Engine is a supervisor receiver that runs the engine (spawn mode).
type Engine struct {
	// Component is "receivers::mlx_supervisor" (or .../name).
	Component  string
	Command    []string
	WorkingDir string
	// Model is the receiver's model key ("" when not set).
	Model string
	// RunFile is where the supervisor records the running engine
	// (supervisorreceiver.RunFile).
	RunFile string
}

// Engines lists the supervisors in use that run an engine (a command is
// set).
func Engines(conf map[string]any) []Engine {
	var out []Engine
	for _, id := range usedIDs(conf, "receivers") {
		if componentType(id) != supervisorType {
			continue
		}
		cfg, _ := lookup(conf, "receivers::"+id)
		cmd := stringList(mustLookup(cfg, "command"))
		if len(cmd) == 0 {
			continue // attach mode
		}
		e := Engine{Component: "receivers::" + id, Command: cmd}
		e.WorkingDir, _ = lookupString(cfg, "working_dir")
		e.Model, _ = lookupString(cfg, "model")
		runFile, _ := lookupString(cfg, "run_file")
		logPath, _ := lookupString(cfg, "log::path")
		e.RunFile = supervisorreceiver.RunFile(runFile, logPath)
		out = append(out, e)
	}
	return out
}

// flagValues are the values of --name in argv (--name v and --name=v).
func flagValues(argv []string, name string) []string {
	var out []string
	for i, a := range argv {
		if a == name && i+1 < len(argv) {
			out = append(out, argv[i+1])
		} else if v, ok := strings.CutPrefix(a, name+"="); ok {
			out = append(out, v)
		}
	}
	return out
}

// listener is the engine's own port, when its command sets --port (its
// --host, or mlx_lm's default 127.0.0.1).
func (e Engine) listener() (Listener, bool) {
	ports := flagValues(e.Command, "--port")
	if len(ports) == 0 {
		return Listener{}, false
	}
	port := ports[len(ports)-1]
	if n, err := strconv.Atoi(port); err != nil || n <= 0 {
		return Listener{}, false
	}
	host := "127.0.0.1"
	if hosts := flagValues(e.Command, "--host"); len(hosts) > 0 {
		host = hosts[len(hosts)-1]
	}
	return Listener{Component: e.Component, Key: "the engine's --port in command", Endpoint: net.JoinHostPort(host, port), RunFile: e.RunFile}, true
}

// usedIDs are the component ids of a kind ("receivers", "exporters",
// "extensions") that the service uses and that are configured, sorted.
func usedIDs(conf map[string]any, kind string) []string {
	configured, _ := lookup(conf, kind)
	cm, _ := configured.(map[string]any)
	used := map[string]bool{}
	if kind == "extensions" {
		for _, id := range stringList(mustLookup(conf, "service::extensions")) {
			used[id] = true
		}
	} else {
		pipelines, _ := lookup(conf, "service::pipelines")
		pm, _ := pipelines.(map[string]any)
		for _, p := range pm {
			for _, id := range stringList(mustLookup(p, kind)) {
				used[id] = true
			}
		}
	}
	var out []string
	for id := range used {
		if _, ok := cm[id]; ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// componentType is the type part of a component id ("prometheus/hw":
// "prometheus").
func componentType(id string) string {
	t, _, _ := strings.Cut(id, "/")
	return t
}

// lookup walks a "::"-separated path through nested maps.
func lookup(v any, path string) (any, bool) {
	if path == "" {
		return v, true
	}
	for _, k := range strings.Split(path, "::") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func mustLookup(v any, path string) any {
	v, _ = lookup(v, path)
	return v
}

// lookupString is a scalar setting as text (YAML may have made a port an
// int); false when it is absent or not a scalar.
func lookupString(v any, path string) (string, bool) {
	v, ok := lookup(v, path)
	if !ok {
		return "", false
	}
	return scalar(v)
}

func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", true
	case string:
		return v, true
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, bool:
		return fmt.Sprint(v), true
	}
	return "", false
}

// stringList is a list of scalars as text (nil for anything else).
func stringList(v any) []string {
	list, ok := v.([]any)
	if !ok {
		if s, ok := v.([]string); ok {
			return s
		}
		return nil
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := scalar(e)
		if !ok {
			return nil
		}
		out = append(out, s)
	}
	return out
}
