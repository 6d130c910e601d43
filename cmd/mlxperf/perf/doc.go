// Package perf measures the distribution itself, for `make bench`
// (cmd/mlxperf): the proxy beside Debian's nginx and beside no proxy at
// all, the same load on each, in one run; and the footprint of the whole
// distribution, idle and under a realistic load, read from /proc.
//
// It is a benchmark, not a test: it prints figures and asserts none.
package perf
