// Package loghealthtest holds the log-health helpers of tests, kept out of
// the production package's API.
package loghealthtest

import "github.com/mlx-otelcol/mlx-otelcol/internal/loghealth"

// Key is a health key of one test's own, forgotten when the test ends, so
// that a test run again in the same process (go test -count=N) starts from
// zero.
func Key(t interface {
	Name() string
	Cleanup(func())
}) string {
	key := t.Name()
	t.Cleanup(func() { loghealth.Forget(key) })
	return key
}
