package upstream

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func threeEngines() []State {
	return []State{
		{Name: "a", Models: []string{"qwen"}, Up: true, MaxInFlight: 4},
		{Name: "b", Models: []string{"qwen", "llama"}, Up: true, MaxInFlight: 4},
		{Name: "c", Models: []string{"qwen"}, Up: true, MaxInFlight: 4},
	}
}

func TestOnlyAnUpstreamThatServesTheModel(t *testing.T) {
	ups := threeEngines()
	for k := range 50 {
		i, r := Choose("llama", fmt.Sprint("conv-", k), ups, nil, now)
		require.Equal(t, 1, i)
		require.Equal(t, Affine, r)
	}
	i, r := Choose("mistral", "x", ups, nil, now)
	assert.Equal(t, -1, i)
	assert.Equal(t, None, r, "no upstream serves it")
}

func TestAKeyStaysWhereItWas(t *testing.T) {
	ups := threeEngines()
	counts := map[int]int{}
	for k := range 3000 {
		key := fmt.Sprint("conv-", k)
		first, r := Choose("qwen", key, ups, nil, now)
		require.Equal(t, Affine, r)
		for range 3 {
			again, _ := Choose("qwen", key, ups, nil, now)
			require.Equal(t, first, again, "the same key, the same upstream")
		}
		counts[first]++
	}
	for i := range ups {
		assert.InDelta(t, 1000, counts[i], 150, "keys spread over the upstreams: %v", counts)
	}
}

// When an upstream leaves, only its own keys move, and they come back when
// it returns; the others' caches are never disturbed.
func TestOnlyTheLeaversKeysMove(t *testing.T) {
	ups := threeEngines()
	before := map[string]int{}
	for k := range 2000 {
		key := fmt.Sprint("conv-", k)
		before[key], _ = Choose("qwen", key, ups, nil, now)
	}
	for _, out := range []func(*State){
		func(s *State) { s.Up = false },
		func(s *State) { s.EjectedUntil = now.Add(time.Second) },
	} {
		gone := threeEngines()
		out(&gone[2])
		moved := 0
		for key, was := range before {
			i, r := Choose("qwen", key, gone, nil, now)
			require.Equal(t, Affine, r)
			require.NotEqual(t, 2, i)
			if was != 2 {
				assert.Equal(t, was, i, "%s was not on the leaver", key)
			} else {
				moved++
			}
		}
		assert.Positive(t, moved)
		for key, was := range before {
			i, _ := Choose("qwen", key, ups, nil, now)
			assert.Equal(t, was, i, "%s back where it was", key)
		}
	}
}

func TestEjectionEndsOnTime(t *testing.T) {
	ups := threeEngines()
	ups[0].Models, ups[2].Models = nil, nil // b alone serves qwen
	ups[1].EjectedUntil = now.Add(10 * time.Second)
	i, r := Choose("qwen", "k", ups, nil, now.Add(9*time.Second))
	assert.Equal(t, -1, i)
	assert.Equal(t, None, r)
	i, r = Choose("qwen", "k", ups, nil, now.Add(10*time.Second))
	assert.Equal(t, 1, i)
	assert.Equal(t, Affine, r)
}

func TestSaturatedSpillsToTheLeastBusy(t *testing.T) {
	ups := threeEngines()
	key := "conv-7"
	affine, _ := Choose("qwen", key, ups, nil, now)
	ups[affine].InFlight = 4
	others := []int{}
	for i := range ups {
		if i != affine {
			others = append(others, i)
		}
	}
	ups[others[0]].InFlight, ups[others[1]].InFlight = 3, 1
	i, r := Choose("qwen", key, ups, nil, now)
	assert.Equal(t, Spilled, r)
	assert.Equal(t, others[1], i, "the least busy")

	// By share of its bound, not by count.
	ups[others[0]].InFlight, ups[others[0]].MaxInFlight = 3, 32
	ups[others[1]].InFlight, ups[others[1]].MaxInFlight = 1, 2
	i, _ = Choose("qwen", key, ups, nil, now)
	assert.Equal(t, others[0], i, "3 of 32 is less busy than 1 of 2")

	// All saturated: it waits where its cache is.
	for j := range ups {
		ups[j].InFlight, ups[j].MaxInFlight = 4, 4
	}
	i, r = Choose("qwen", key, ups, nil, now)
	assert.Equal(t, affine, i)
	assert.Equal(t, Saturated, r)

	// No bound: never saturated.
	for j := range ups {
		ups[j].InFlight, ups[j].MaxInFlight = 100, 0
	}
	i, r = Choose("qwen", key, ups, nil, now)
	assert.Equal(t, affine, i)
	assert.Equal(t, Affine, r)
}

// A retry goes to another upstream: the one tried is not chosen again.
func TestARetryGoesElsewhere(t *testing.T) {
	ups := threeEngines()
	first, _ := Choose("qwen", "conv-1", ups, nil, now)
	tried := make([]bool, len(ups))
	tried[first] = true
	second, r := Choose("qwen", "conv-1", ups, tried, now)
	assert.NotEqual(t, first, second)
	assert.Equal(t, Affine, r, "the key's next in rank")
	tried[second] = true
	third, _ := Choose("qwen", "conv-1", ups, tried, now)
	assert.NotContains(t, []int{first, second}, third)
	tried[third] = true
	i, r := Choose("qwen", "conv-1", ups, tried, now)
	assert.Equal(t, -1, i)
	assert.Equal(t, None, r)
}

func TestEjectionGrowsAndResets(t *testing.T) {
	p := EjectionPolicy{Failures: 2, Base: 5 * time.Second, Max: 30 * time.Second}
	var e Ejection
	e = p.Failed(e, now)
	assert.True(t, e.Until.IsZero(), "one failure of two does not eject")
	var lengths []time.Duration
	at := now
	for range 5 {
		e = p.Failed(p.Failed(e, at), at)
		lengths = append(lengths, e.Until.Sub(at))
		at = e.Until
	}
	assert.Equal(t, []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}, lengths)
	assert.Equal(t, Ejection{}, p.Succeeded(e), "a success counts from nothing")
	one := EjectionPolicy{Failures: 0, Base: time.Second, Max: time.Minute}
	assert.Equal(t, now.Add(time.Second), one.Failed(Ejection{}, now).Until, "a threshold under 1 is 1")
}
