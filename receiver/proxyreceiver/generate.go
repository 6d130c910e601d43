package proxyreceiver

// metadata.yaml is the schema of the proxy's spans and records; mdgen
// writes documentation.md's attribute tables, the keys the proxy sets
// (proxy/generated_attributes.go) and the keys this receiver sets
// (generated_attributes.go) from it.
//go:generate go run ../../cmd/mdgen -go "" -attributes-go ../../proxy/generated_attributes.go -attributes span_attributes,resource_attributes,span_events -package proxy
//go:generate go run ../../cmd/mdgen -doc "" -go "" -attributes-go generated_attributes.go -attributes log_attributes,resource_attributes
