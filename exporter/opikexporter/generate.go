package opikexporter

// metadata.yaml is the schema of what the exporter counts itself; mdgen
// writes documentation.md's metrics section and generated_metrics.go from
// it.
//go:generate go run ../../cmd/mdgen
