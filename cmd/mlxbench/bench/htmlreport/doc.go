// Package htmlreport writes a run's self-contained HTML report: its
// tables and its plots, drawn with gonum/plot and embedded as PNG data
// URIs, so the file can be mailed, attached to an issue or opened from a
// CI artifact with nothing beside it.
package htmlreport
