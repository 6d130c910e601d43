package otlphttpsinkexporter

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests when a goroutine outlives them: Shutdown stops
// every goroutine Start began.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
