package upstream

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func twoMembers() []Member {
	return []Member{{Name: "a", Models: []string{"qwen"}, MaxInFlight: 2}, {Name: "b", Models: []string{"qwen"}, MaxInFlight: 2}}
}

func TestAPoolIsUpUntilProbed(t *testing.T) {
	p := NewPool(twoMembers(), EjectionPolicy{Failures: 1, Base: time.Second, Max: time.Minute})
	i, r := p.Pick("qwen", "k", nil, now)
	assert.GreaterOrEqual(t, i, 0, "taken before any probe")
	assert.Equal(t, Affine, r)
	p.Done(i, true, now)
	assert.True(t, p.SetUp(0, false), "the previous verdict")
	assert.True(t, p.SetUp(1, false))
	i, r = p.Pick("qwen", "k", nil, now)
	assert.Equal(t, -1, i, "both said down")
	assert.Equal(t, None, r)
	p.SetUp(0, true)
	i, _ = p.Pick("qwen", "k", nil, now)
	assert.Equal(t, 0, i)
	assert.True(t, p.Serves("qwen"))
	assert.False(t, p.Serves("llama"))
}

// In flight is counted from Pick to Done, and saturation spills: the third
// request on a bound of two goes to the other upstream.
func TestPickCountsInFlight(t *testing.T) {
	p := NewPool(twoMembers(), EjectionPolicy{Failures: 1, Base: time.Second, Max: time.Minute})
	p.SetUp(0, true)
	p.SetUp(1, true)
	a, _ := p.Pick("qwen", "k", nil, now)
	b, _ := p.Pick("qwen", "k", nil, now)
	c, r := p.Pick("qwen", "k", nil, now)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, c)
	assert.Equal(t, Spilled, r)
	p.Done(a, true, now)
	d, r := p.Pick("qwen", "k", nil, now)
	assert.Equal(t, a, d, "back where its cache is once there is room")
	assert.Equal(t, Affine, r)
	assert.Equal(t, 2, p.Snapshot()[a].InFlight)
}

func TestAFailedConnectionEjects(t *testing.T) {
	p := NewPool(twoMembers(), EjectionPolicy{Failures: 1, Base: 10 * time.Second, Max: time.Minute})
	p.SetUp(0, true)
	p.SetUp(1, true)
	i, _ := p.Pick("qwen", "k", nil, now)
	assert.True(t, p.Done(i, false, now), "ejected")
	assert.Equal(t, now.Add(10*time.Second), p.Snapshot()[i].EjectedUntil)
	for range 5 {
		j, _ := p.Pick("qwen", "k", nil, now.Add(5*time.Second))
		assert.NotEqual(t, i, j, "ejected")
		p.Done(j, true, now)
	}
	j, _ := p.Pick("qwen", "k", nil, now.Add(10*time.Second))
	assert.Equal(t, i, j, "back after its ejection")
	p.Done(j, true, now.Add(10*time.Second))
	assert.True(t, p.Snapshot()[i].EjectedUntil.IsZero(), "a success clears it")
}

// Many goroutines picking and ending: the counts return to zero (run with
// -race).
func TestPoolUnderConcurrency(t *testing.T) {
	// (Failures high enough that neither is ejected: every Pick finds one.)
	p := NewPool(twoMembers(), EjectionPolicy{Failures: 1 << 20, Base: time.Millisecond, Max: time.Millisecond})
	p.SetUp(0, true)
	p.SetUp(1, true)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 200 {
				i, _ := p.Pick("qwen", fmt.Sprint(g, "-", k%7), nil, now)
				if !assert.GreaterOrEqual(t, i, 0) {
					return
				}
				if k%50 == 0 {
					p.SetUp(i, true)
				}
				p.Done(i, k%13 != 0, now)
			}
		}()
	}
	wg.Wait()
	for _, s := range p.Snapshot() {
		assert.Zero(t, s.InFlight, s.Name)
	}
}

// Requests without a key spread over the engines.
func TestRequestsWithoutAKeySpread(t *testing.T) {
	p := NewPool(twoMembers(), EjectionPolicy{Failures: 1, Base: time.Second, Max: time.Minute})
	counts := map[int]int{}
	for range 400 {
		i, r := p.Pick("qwen", "", nil, now)
		require.Equal(t, Affine, r)
		counts[i]++
		p.Done(i, true, now)
	}
	assert.InDelta(t, 200, counts[0], 50, "%v", counts)
	assert.InDelta(t, 200, counts[1], 50, "%v", counts)
}
