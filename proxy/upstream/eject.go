package upstream

import "time"

// Ejection is an upstream's passive health: failed connections take it out
// between the active checks, as Envoy's outlier detection does
// (envoy.config.cluster.v3.OutlierDetection: consecutive failures eject for
// base_ejection_time times the number of ejections, up to
// max_ejection_time). Only failures to connect count: a refused or
// timed-out connection says no engine listens there, whatever the request;
// an engine's error answer is the request's and ejects nothing.
type Ejection struct {
	Failures int       // consecutive failed connections since the last success or ejection
	Count    int       // ejections in a row (grows the next one's length)
	Until    time.Time // ejected before this
}

// EjectionPolicy is how many failures eject and for how long.
type EjectionPolicy struct {
	Failures int           // consecutive failed connections that eject (>= 1)
	Base     time.Duration // the first ejection's length; doubled each next one
	Max      time.Duration // the longest ejection
}

// Failed is e after a failed connection at now.
func (p EjectionPolicy) Failed(e Ejection, now time.Time) Ejection {
	e.Failures++
	if e.Failures < max(p.Failures, 1) {
		return e
	}
	d := p.Base
	for i := 1; i <= e.Count && d < p.Max; i++ {
		d *= 2
	}
	e.Failures, e.Count, e.Until = 0, e.Count+1, now.Add(min(d, p.Max))
	return e
}

// Succeeded is e after a request that reached the engine: it counts again
// from nothing.
func (EjectionPolicy) Succeeded(Ejection) Ejection { return Ejection{} }
