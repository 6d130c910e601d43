package logclassifyprocessor

import (
	"testing"

	"go.opentelemetry.io/collector/featuregate"
)

// The distribution runs file_log with stanza's synchronous emitter.
func TestSynchronousLogEmitterIsOn(t *testing.T) {
	found := false
	featuregate.GlobalRegistry().VisitAll(func(g *featuregate.Gate) {
		if g.ID() == synchronousEmitterGate {
			found = true
			if !g.IsEnabled() {
				t.Errorf("%s is off", g.ID())
			}
		}
	})
	if !found {
		t.Fatalf("%s is not registered: stanza renamed or removed it", synchronousEmitterGate)
	}
}
