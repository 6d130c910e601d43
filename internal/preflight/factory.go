// Package preflight is the collector's check before it starts: a confmap
// converter (listed in builder-config.yaml) that sees the whole resolved
// configuration before any component is created, and stops the collector
// with one error listing every problem it finds: a port the configuration
// listens on that is already in use (naming the component, and the process
// holding the port when it can be read), two components on one port, an
// address that cannot be listened on, a supervisor engine that is not on
// PATH, a model path that cannot be read. documentation.md says what it
// checks and how to turn it off.
package preflight

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/collector/confmap"
)

// EnvSwitch turns the preflight off when set to off (or 0, false, no).
const EnvSwitch = "MLX_PREFLIGHT"

// NewFactory returns the factory of the preflight converter.
func NewFactory() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter {
		return &converter{args: os.Args[1:], getenv: os.Getenv, ports: systemPorts}
	})
}

type converter struct {
	args   []string
	getenv func(string) string
	ports  portChecks
	// done: the configuration was resolved once already. A reload
	// (SIGHUP) resolves it again while this collector may still hold its
	// ports: only the start is checked.
	done atomic.Bool
}

// Convert checks the resolved configuration, and changes nothing in it.
func (c *converter) Convert(_ context.Context, conf *confmap.Conf) error {
	if c.done.Swap(true) || off(c.getenv(EnvSwitch)) || subcommand(c.args) != "" {
		return nil
	}
	return check(conf.ToStringMap(), c.ports)
}

// check runs every check on a resolved configuration; nil when it passes.
func check(conf map[string]any, ports portChecks) error {
	var problems []error
	problems = append(problems, checkPorts(Listeners(conf), ports)...)
	for _, e := range Engines(conf) {
		problems = append(problems, checkEngine(e)...)
	}
	problems = append(problems, checkModels(conf)...)
	if len(problems) == 0 {
		return nil
	}
	return &Error{Problems: problems}
}

// Error is every problem the preflight found.
type Error struct {
	Problems []error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "preflight: the collector cannot start (%s=off skips these checks):", EnvSwitch)
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p.Error())
	}
	return b.String()
}

// Unwrap gives the problems to errors.Is and errors.As.
func (e *Error) Unwrap() []error { return e.Problems }
