package upstream

import (
	"strconv"
	"sync"
	"time"
)

// Pool is the upstreams' shared state, safe for the request goroutines and
// the probes: requests in flight, active verdicts, passive ejections. Each
// choice runs Choose on a snapshot taken under the lock, so the rules stay
// in the pure function.
type Pool struct {
	policy EjectionPolicy

	mu    sync.Mutex
	state []State
	eject []Ejection
	// next numbers the requests without an affinity key: each gets a key
	// of its own, so they spread over the engines.
	next uint64
}

// Member is one upstream as configured.
type Member struct {
	Name        string
	Models      []string
	MaxInFlight int // 0: never saturated
}

// NewPool holds members, each up until a probe (SetUp) or failed
// connections (Done) say otherwise, as one engine behind the proxy takes
// requests from the start: a request that comes before the first probe
// goes where it would go, and one to an engine that is not there yet is
// retried elsewhere.
func NewPool(members []Member, policy EjectionPolicy) *Pool {
	p := &Pool{policy: policy, state: make([]State, len(members)), eject: make([]Ejection, len(members))}
	for i, m := range members {
		p.state[i] = State{Name: m.Name, Models: append([]string(nil), m.Models...), MaxInFlight: m.MaxInFlight, Up: true}
	}
	return p
}

// Len is how many upstreams the pool holds.
func (p *Pool) Len() int { return len(p.state) }

// Pick chooses an upstream for a request (Choose) and, when it found one,
// counts the request in flight there until Done. tried marks the upstreams
// this request already tried (nil for its first try).
//
// A request without a key (no conversation to keep, or routing.affinity
// none) is given one of its own, a number, so that such requests spread
// over the engines rather than all going to the one "" ranks first.
func (p *Pool) Pick(model, key string, tried []bool, now time.Time) (int, Reason) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if key == "" {
		p.next++
		key = "#" + strconv.FormatUint(p.next, 10)
	}
	i, r := Choose(model, key, p.state, tried, now)
	if i >= 0 {
		p.state[i].InFlight++
	}
	return i, r
}

// Done ends a request Pick counted on upstream i. reached says whether it
// reached the engine (a connection was made): false counts toward i's
// passive ejection, true clears it. ejected says this failure ejected it.
func (p *Pool) Done(i int, reached bool, now time.Time) (ejected bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state[i].InFlight--
	before := p.eject[i].Count
	if reached {
		p.eject[i] = p.policy.Succeeded(p.eject[i])
	} else {
		p.eject[i] = p.policy.Failed(p.eject[i], now)
	}
	p.state[i].EjectedUntil = p.eject[i].Until
	return p.eject[i].Count > before
}

// SetUp records upstream i's active verdict (its /health, and its
// supervisor's readiness for an engine one owns). It returns the previous
// one, so that the caller logs changes only.
func (p *Pool) SetUp(i int, up bool) (was bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	was, p.state[i].Up = p.state[i].Up, up
	return was
}

// SetModels replaces the models upstream i serves (as its /v1/models lists
// them, for an upstream configured without a list).
func (p *Pool) SetModels(i int, models []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state[i].Models = append([]string(nil), models...)
}

// Snapshot is a copy of the upstreams' state, for metrics and tests.
func (p *Pool) Snapshot() []State {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]State, len(p.state))
	for i, s := range p.state {
		s.Models = append([]string(nil), s.Models...)
		out[i] = s
	}
	return out
}

// Serves is the union of the models the upstreams serve: the proxy's
// allowlist.
func (p *Pool) Serves(model string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.state {
		if p.state[i].serves(model) {
			return true
		}
	}
	return false
}
