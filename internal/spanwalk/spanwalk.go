// Package spanwalk visits every span of a ptrace.Traces, for the
// components that read spans without caring about their resource or scope
// (the opik exporter, the judge's Jaeger source, the Opik stand-in).
package spanwalk

import "go.opentelemetry.io/collector/pdata/ptrace"

// Each calls f for every span of td, in order.
func Each(td ptrace.Traces, f func(ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				f(spans.At(k))
			}
		}
	}
}
