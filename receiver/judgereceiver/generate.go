package judgereceiver

// metadata.yaml is the schema of the metrics and of the evaluation events;
// mdgen writes documentation.md's metrics section and events table,
// generated_metrics.go and the events' keys (generated_attributes.go) from
// it.
//go:generate go run ../../cmd/mdgen -attributes-go generated_attributes.go -attributes log_attributes,resource_attributes
