package proxyextension

// metadata.yaml is the schema of the proxy's metrics; mdgen writes
// documentation.md's metrics section and the proxy's
// generated_metrics.go (names, help texts, buckets) from it.
//go:generate go run ../../cmd/mdgen -go ../../proxy/generated_metrics.go -package proxy
