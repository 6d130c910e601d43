package heuristics

import "sync"

// scratch is the memory one evaluation works in: its words, their folded
// norms, and the repetition rule's word ids and trigram counts. Evaluate
// takes one from scratchPool and gives it back, so that scoring an answer
// allocates next to nothing (the scorer runs once per answer).
type scratch struct {
	ws     []word
	folded []byte // the norms that are not slices of the prose, end to end
	ends   []int  // where each of them ends in folded

	content []int32            // the content words, as ids
	ids     map[string]int32   // a content word's id: its first position's rank
	counts  map[[3]int32]int32 // trigram of ids → occurrences
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooledWords bounds what a pooled scratch keeps: the slices and maps
// of an outsized answer are left to the collector, so that clearing them
// does not cost every small answer after it.
const maxPooledWords = 4096

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// put returns sc to the pool, holding no reference to the text it read.
func (sc *scratch) put() {
	if cap(sc.ws) > maxPooledWords {
		*sc = scratch{}
		scratchPool.Put(sc)
		return
	}
	clear(sc.ws[:cap(sc.ws)])
	sc.ws, sc.folded, sc.ends, sc.content = sc.ws[:0], sc.folded[:0], sc.ends[:0], sc.content[:0]
	clear(sc.ids)
	clear(sc.counts)
	scratchPool.Put(sc)
}
