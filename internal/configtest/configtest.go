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

// Load unmarshals the section typ/name of testdata/config.yaml into cfg
// (which holds the defaults) and validates it. An unmarshal error (unknown
// keys, wrong types) or a validation error is returned for the test to check.
func Load(t *testing.T, typ, name string, cfg component.Config) error {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.MustNewIDWithName(typ, name).String())
	require.NoError(t, err)
	if err := sub.Unmarshal(cfg); err != nil {
		return err
	}
	return confmap.Validate(cfg)
}
