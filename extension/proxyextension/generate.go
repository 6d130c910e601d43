package proxyextension

// metadata.yaml is the schema of the proxy's metrics; mdgen writes
// documentation.md's metrics section and the proxy's
// generated_metrics.go (names, help texts, buckets, and a typed registrar
// per family with its labels, plus each attribute's allowed values) from it.
//go:generate go run ../../cmd/mdgen -go ../../proxy/generated_metrics.go -package proxy -registrars
