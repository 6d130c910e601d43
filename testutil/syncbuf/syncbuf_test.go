package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Concurrent writers lose nothing, and readers may read meanwhile (run
// with -race to see the point of it).
func TestConcurrentWritesAndReads(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("x\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := strings.Count(b.String(), "x\n"); got != 800 {
		t.Fatalf("%d writes kept, want 800", got)
	}
	c := b.Bytes()
	c[0] = 'y'
	if b.String()[0] != 'x' {
		t.Fatal("Bytes returned the buffer itself, not a copy")
	}
}
