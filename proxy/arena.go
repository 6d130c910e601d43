package proxy

// byteArena copies small values into shared blocks: a stream's logprobs
// come as one value of a few hundred bytes per chunk, read from the tap's
// buffer, and the record keeps them until the answer is scored; one block
// for many values spares the allocator and the collector a value each.
type byteArena struct{ free []byte }

// Blocks grow from minArenaBlock to maxArenaBlock, and hold at least four
// values of the size that opened them, so a short answer takes little; a
// value over half the largest block gets memory of its own.
const (
	minArenaBlock = 1 << 10
	maxArenaBlock = 64 << 10
)

// copy returns a copy of b in the arena.
func (a *byteArena) copy(b []byte) []byte {
	if len(b) > cap(a.free)-len(a.free) {
		size := min(max(2*cap(a.free), 4*len(b), minArenaBlock), maxArenaBlock)
		if len(b) > size/2 {
			return append([]byte(nil), b...)
		}
		a.free = make([]byte, 0, size)
	}
	at := len(a.free)
	a.free = append(a.free, b...)
	return a.free[at:len(a.free):len(a.free)]
}
