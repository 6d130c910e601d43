package logclassifyprocessor

import (
	"go.opentelemetry.io/collector/featuregate"

	// stanza's metadata package registers the gate; the adapter imports
	// it, so importing the adapter here runs that registration first.
	_ "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
)

// synchronousEmitterGate makes file_log hand each read to the pipeline
// before it moves its checkpoint on. Without it, stanza batches entries in
// memory for up to 100 ms after the checkpoint has passed them, and a
// collector killed then (kill -9, a crash, a power cut) loses those lines
// of the engine's log for good (opentelemetry-collector-contrib
// pkg/stanza, issue #35456). This distribution turns it on by default;
// --feature-gates=-stanza.synchronousLogEmitter turns it off again.
const synchronousEmitterGate = "stanza.synchronousLogEmitter"

func init() {
	_ = featuregate.GlobalRegistry().Set(synchronousEmitterGate, true)
}
