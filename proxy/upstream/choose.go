// Package upstream chooses which engine serves a request when one proxy
// fronts several: a pure function over the upstreams' state, so the rules
// (affinity, spill-over, ejection, retry) are read and tested here alone.
//
// Why affinity matters for mlx_lm: its prompt cache lives in the engine's
// process. mlx_lm v0.31.3 models/cache.py, LRUPromptCache.fetch_nearest_cache,
// looks the new prompt's tokens up in a trie of cached prompts and reuses the
// longest cached prefix; a conversation's next turn resends every earlier
// message, so it finds its previous turn there, on that engine only. Sent to
// another engine, it pays its whole prompt again.
package upstream

import (
	"encoding/binary"
	"hash/fnv"
	"time"
)

// State is what the proxy knows of one upstream at the moment of choosing.
type State struct {
	// Name identifies the upstream (configuration); it also seeds the
	// affinity hash, so a name must not change while its engine keeps its
	// cache.
	Name   string
	Models []string
	// Up is the active checks' verdict: /health answered 200 and, for an
	// engine a supervisor owns, the supervisor says ready (a wedged
	// generation thread under mlx_lm v0.31.3 leaves /health at 200).
	Up bool
	// EjectedUntil: passive ejection after failed connections (Ejection);
	// the upstream takes no request before then.
	EjectedUntil time.Time
	// InFlight is the requests the proxy has sent it that have not ended;
	// MaxInFlight the bound above which it counts as saturated (0: never).
	InFlight, MaxInFlight int
}

func (s *State) serves(model string) bool {
	for _, m := range s.Models {
		if m == model {
			return true
		}
	}
	return false
}

func (s *State) saturated() bool { return s.MaxInFlight > 0 && s.InFlight >= s.MaxInFlight }

// Reason says how a choice was made.
type Reason int

const (
	// None: no upstream that serves the model is up (the proxy answers 503
	// with Retry-After).
	None Reason = iota
	// Affine: the upstream the request's affinity key ranks first.
	Affine
	// Spilled: the affine upstream was saturated; the least busy other one.
	Spilled
	// Saturated: every eligible upstream was saturated; the request waits
	// at the affine one, where its cache is.
	Saturated
)

var reasonNames = [...]string{"none", "affine", "spilled", "saturated"}

// Retried names, in series, a request sent to an upstream after the one
// chosen first could not be reached.
const Retried = "retried"

func (r Reason) String() string { return reasonNames[r] }

// Choose is the upstream (an index into ups) for a request for model with
// affinity key key, and how it was chosen; -1 and None when none is
// eligible. An upstream is eligible when it serves the model, is up, is not
// ejected at now and was not tried already for this request (tried[i]).
//
// Among the eligible, the affine one is the highest by rendezvous hashing of
// (key, name): the same key goes to the same upstream for as long as it is
// eligible, and when it leaves only its own keys move (each to its next in
// rank), and they come back when it returns. No table of keys is kept, so no
// client can grow the proxy's memory by sending new keys.
func Choose(model, key string, ups []State, tried []bool, now time.Time) (int, Reason) {
	affine, best := -1, uint64(0)
	for i := range ups {
		if !eligible(&ups[i], model, i, tried, now) {
			continue
		}
		if w := weight(key, ups[i].Name); affine < 0 || w > best {
			affine, best = i, w
		}
	}
	if affine < 0 {
		return -1, None
	}
	if !ups[affine].saturated() {
		return affine, Affine
	}
	spill := -1
	for i := range ups {
		if i == affine || !eligible(&ups[i], model, i, tried, now) || ups[i].saturated() {
			continue
		}
		if spill < 0 || busier(&ups[spill], &ups[i]) {
			spill = i
		}
	}
	if spill < 0 {
		return affine, Saturated
	}
	return spill, Spilled
}

func eligible(s *State, model string, i int, tried []bool, now time.Time) bool {
	if i < len(tried) && tried[i] {
		return false
	}
	return s.Up && !now.Before(s.EjectedUntil) && s.serves(model)
}

// busier: a is more loaded than b, by the share of its bound in use (by
// requests in flight when neither has a bound).
func busier(a, b *State) bool {
	if a.MaxInFlight > 0 && b.MaxInFlight > 0 {
		return a.InFlight*b.MaxInFlight > b.InFlight*a.MaxInFlight
	}
	return a.InFlight > b.InFlight
}

// weight is the rendezvous score of key on the upstream named name: FNV-1a
// over both, finished with splitmix64's mixer so that names differing in a
// last character still rank independently. Stable across restarts (no
// random seed): a restarted proxy sends each conversation where it was.
func weight(key, name string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(key))
	var sep [8]byte
	binary.LittleEndian.PutUint64(sep[:], uint64(len(key)))
	_, _ = h.Write(sep[:])
	_, _ = h.Write([]byte(name))
	z := h.Sum64() + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
