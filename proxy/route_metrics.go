package proxy

// The routing series (extension/proxyextension/metadata.yaml, group
// routing), served only with upstreams. Every label value is a configured
// name: an upstream, its node, a model it lists.

// newRoutingMetrics registers the routing families in r, each series of
// every configured upstream and model at 0 from the start.
func newRoutingMetrics(r registrar, engines []*engine) *routingFamilies {
	f := &routingFamilies{}
	f.register(r)
	models := map[string]bool{}
	for _, e := range engines {
		u, n := e.cfg.Name, e.cfg.Node
		f.mlxUpstreamUp.WithLabelValues(u, n)
		f.mlxUpstreamInFlight.WithLabelValues(u, n)
		f.mlxUpstreamEjectionsTotal.WithLabelValues(u, n)
		f.mlxUpstreamRetriesTotal.WithLabelValues(u, n)
		for _, m := range e.cfg.Models {
			models[m] = true
			for _, c := range labelValuesChoice {
				f.mlxUpstreamRequestsTotal.WithLabelValues(u, n, m, c)
			}
		}
	}
	// Up from the start, as the pool takes them (upstream.NewPool).
	up := make([]bool, len(engines))
	for i := range up {
		up[i] = true
	}
	f.verdicts(engines, up)
	return f
}

// sent counts a request sent to engine e, and its place in flight there.
func (f *routingFamilies) sent(e *engine, model, choice string) {
	f.mlxUpstreamRequestsTotal.WithLabelValues(e.cfg.Name, e.cfg.Node, model, choice).Inc()
	f.mlxUpstreamInFlight.WithLabelValues(e.cfg.Name, e.cfg.Node).Inc()
}

// ended gives back a request's place in flight at e; ejected says the
// failure that ended it ejected e, retried that it goes on elsewhere.
func (f *routingFamilies) ended(e *engine, ejected, retried bool) {
	f.mlxUpstreamInFlight.WithLabelValues(e.cfg.Name, e.cfg.Node).Dec()
	if ejected {
		f.mlxUpstreamEjectionsTotal.WithLabelValues(e.cfg.Name, e.cfg.Node).Inc()
	}
	if retried {
		f.mlxUpstreamRetriesTotal.WithLabelValues(e.cfg.Name, e.cfg.Node).Inc()
	}
}

// verdicts sets each engine's up and each model's count of engines up.
func (f *routingFamilies) verdicts(engines []*engine, up []bool) {
	byModel := map[string]int{}
	for i, e := range engines {
		v := 0.0
		if up[i] {
			v = 1
		}
		f.mlxUpstreamUp.WithLabelValues(e.cfg.Name, e.cfg.Node).Set(v)
		for _, m := range e.cfg.Models {
			byModel[m] += int(v)
		}
	}
	for m, n := range byModel {
		f.mlxModelUpstreamsUp.WithLabelValues(m).Set(float64(n))
	}
}
