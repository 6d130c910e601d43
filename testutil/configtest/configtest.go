// Package configtest loads a component's testdata/config.yaml the way the
// collector does, for the components' config tests.
package configtest

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

// Load unmarshals the section <factory's type>/name of testdata/config.yaml
// into the factory's default config and validates it. An unmarshal error
// (unknown keys, wrong types) or a validation error is returned, with no
// config, for the test to check.
func Load[C component.Config](t *testing.T, f component.Factory, name string) (C, error) {
	t.Helper()
	var none C
	cfg := f.CreateDefaultConfig().(C)
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.NewIDWithName(f.Type(), name).String())
	require.NoError(t, err)
	if err := sub.Unmarshal(cfg); err != nil {
		return none, err
	}
	if err := confmap.Validate(cfg); err != nil {
		return none, err
	}
	return cfg, nil
}
