package proxy

import (
	"slices"
	"sync"
	"unicode/utf8"
)

// otherLabel stands for every value past a label's cap.
const otherLabel = "other"

// labelSet bounds the values of one label: the first max distinct values
// seen (plus any given up front) are kept as they are, the rest become
// "other". Once a value is in, it stays in, so a series never changes
// name while it runs.
type labelSet struct {
	mu   sync.RWMutex
	max  int
	seen map[string]struct{}
	// closed: only the values given up front are kept.
	closed bool
}

func newLabelSet(max int, preset ...string) *labelSet {
	s := &labelSet{max: max, seen: make(map[string]struct{}, max+len(preset))}
	for _, v := range preset {
		if v != "" {
			s.seen[v] = struct{}{}
		}
	}
	return s
}

// maxLabelLen: a longer value (a client can send any model name, a model
// any function name) is "other" rather than a huge series name.
const maxLabelLen = 200

// lookup returns v if it is one of the kept values, else "other"; it
// never takes a slot.
func (s *labelSet) lookup(v string) string {
	s.mu.RLock()
	_, ok := s.seen[v]
	s.mu.RUnlock()
	if ok {
		return v
	}
	return otherLabel
}

// value returns v if it is (or can become) one of the kept values, else
// "other".
func (s *labelSet) value(v string) string {
	if len(v) > maxLabelLen || !utf8.ValidString(v) {
		return otherLabel
	}
	s.mu.RLock()
	_, ok := s.seen[v]
	n := len(s.seen)
	s.mu.RUnlock()
	if ok {
		return v
	}
	if n >= s.max || s.closed {
		return otherLabel
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[v]; ok {
		return v
	}
	if len(s.seen) >= s.max {
		return otherLabel
	}
	s.seen[v] = struct{}{}
	return v
}

// finishReasonLabel keeps a finish_reason that metadata.yaml's reason
// enum names (labelValuesReason); any other becomes "other". mlx_lm sends
// stop, length and tool_calls; the rest are OpenAI's.
func finishReasonLabel(r string) string {
	if slices.Contains(labelValuesReason, r) {
		return r
	}
	return otherLabel
}

// toolTypeLabel keeps a tool call type that the type enum names
// (labelValuesType).
func toolTypeLabel(t string) string {
	if slices.Contains(labelValuesType, t) {
		return t
	}
	if t == "" {
		return "function" // mlx_lm always says function; a missing type means it too
	}
	return otherLabel
}
