package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSubcommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--config", "config/mlx.yaml"}, ""},
		{[]string{"--config", "validate"}, ""}, // a config file named validate
		{[]string{"--config=config/mlx.yaml", "--set", "a=b", "--feature-gates", "x"}, ""},
		{[]string{"validate", "--config", "config/mlx.yaml"}, "validate"},
		{[]string{"--config", "config/mlx.yaml", "validate"}, "validate"},
		{[]string{"--config=config/mlx.yaml", "print-config", "--mode", "unredacted"}, "print-config"},
		{[]string{"-config", "c.yaml", "print-initial-config"}, "print-initial-config"},
		{[]string{"components"}, "components"},
		{[]string{"--", "validate"}, ""},
	} {
		assert.Equal(t, tc.want, subcommand(tc.args), "%q", tc.args)
	}
}

func TestOff(t *testing.T) {
	for v, want := range map[string]bool{"off": true, "OFF": true, " 0 ": true, "false": true, "no": true, "": false, "on": false, "1": false} {
		assert.Equal(t, want, off(v), v)
	}
}
