package proxy

import (
	"crypto/sha256"
	"fmt"
	"testing"
)

func contDigest(i int) digest { return sha256.Sum256([]byte(fmt.Sprint(i))) }

// A conversation taken and remembered again is the newest: the eviction of
// its first, taken copy does not forget it.
func TestContinuationsRePutAfterTakeSurvivesItsStaleCopy(t *testing.T) {
	var c continuations
	d := contDigest(-1)
	c.put(d, "first")
	if id, ok := c.take(d); !ok || id != "first" {
		t.Fatalf("take = %q, %v", id, ok)
	}
	c.put(d, "second")
	// Fill up to the bound: the stale copy of d (the oldest) is evicted,
	// its live copy is among the newest maxContinuations.
	for i := 0; i < maxContinuations-1; i++ {
		c.put(contDigest(i), fmt.Sprint(i))
	}
	if id, ok := c.take(d); !ok || id != "second" {
		t.Fatalf("take after its stale copy's eviction = %q, %v; want second", id, ok)
	}
}

// The oldest conversation is forgotten first, at maxContinuations.
func TestContinuationsForgetTheOldest(t *testing.T) {
	var c continuations
	for i := 0; i <= maxContinuations; i++ {
		c.put(contDigest(i), fmt.Sprint(i))
	}
	if _, ok := c.take(contDigest(0)); ok {
		t.Fatal("the oldest is still remembered past the bound")
	}
	for _, i := range []int{1, maxContinuations} {
		if id, ok := c.take(contDigest(i)); !ok || id != fmt.Sprint(i) {
			t.Fatalf("take(%d) = %q, %v", i, id, ok)
		}
	}
	if _, ok := c.take(contDigest(1)); ok {
		t.Fatal("taken twice")
	}
	if len(c.order) > maxContinuations || len(c.panel) > maxContinuations {
		t.Fatalf("order %d, panel %d: past the bound", len(c.order), len(c.panel))
	}
}
