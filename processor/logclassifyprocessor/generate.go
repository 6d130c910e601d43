package logclassifyprocessor

// metadata.yaml is the schema of the attributes the processor sets; mdgen
// writes documentation.md's "Record attributes" table and
// generated_attributes.go from it.
//go:generate go run ../../cmd/mdgen -go "" -attributes-go generated_attributes.go -attributes log_attributes
