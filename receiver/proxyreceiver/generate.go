package proxyreceiver

// metadata.yaml is the schema of the proxy's spans and records; mdgen
// writes documentation.md's attribute tables, the span keys every package
// that sets or reads them imports (proxy/span/spankey: the proxy, the opik
// exporter, the judge, the stand-ins) and the keys this receiver sets
// (generated_attributes.go) from it.
//go:generate go run ../../cmd/mdgen -go "" -attributes-go ../../proxy/span/spankey/generated_keys.go -attributes span_attributes,resource_attributes,span_events -attributes-exported -package spankey
//go:generate go run ../../cmd/mdgen -doc "" -go "" -attributes-go generated_attributes.go -attributes log_attributes,resource_attributes
