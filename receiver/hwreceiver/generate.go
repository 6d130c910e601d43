package hwreceiver

// metadata.yaml is the schema of the metrics; mdgen writes
// documentation.md's metrics section and generated_metrics.go from it.
//go:generate go run ../../cmd/mdgen
