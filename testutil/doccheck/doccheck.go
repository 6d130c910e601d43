// Package doccheck holds what a component really emits to what it says it
// emits, its metadata.yaml: metrics (metadata.go) and span and record
// attributes (records.go).
package doccheck
