package opikexporter

// metadata.yaml is the schema of the key the exporter adds to spans; mdgen
// writes its table in documentation.md and generated_attributes.go from it.
//go:generate go run ../../cmd/mdgen -go "" -attributes-go generated_attributes.go -attributes span_attributes
