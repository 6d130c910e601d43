package kvcachereceiver

import "time"

// cacheFormat says which log format a cache state came from.
type cacheFormat uint8

const (
	// formatPromptCache is the 4-line block: a total and each type.
	formatPromptCache cacheFormat = iota + 1
	// formatKVCaches is the older one-line form: a total only.
	formatKVCaches
)

// cacheState is the engine's prompt cache as one log record described it.
type cacheState struct {
	Format cacheFormat
	Total  usage
	// ByType is set for formatPromptCache only.
	ByType [numCacheTypes]usage
	// SeenAt is the record's own time, or when it was read if the line had
	// no timestamp.
	SeenAt time.Time
}

// maxInterleavedLines is how many unrelated lines may come between a block's
// header and its last line. mlx_lm logs the four lines back to back, but
// other threads (the HTTP access log) write to the same stderr and can land
// in between; a block whose lines are further apart than this is not one.
const maxInterleavedLines = 16

// allTypesSeen is the mask of a block whose three type lines have all come.
const allTypesSeen = 1<<numCacheTypes - 1

// assembler turns log lines into the latest complete cache state. It only
// publishes a whole block: a header whose type lines have not all arrived
// (the engine is writing it, or the read stopped mid-block) changes nothing
// until they do.
type assembler struct {
	latest cacheState
	known  bool
	// settled is set once a line fixing the latest state has been handled:
	// a complete block or an engine start. Lines before it cannot change
	// the state any more, which is what lets a start read back only a
	// little of a long log.
	settled bool

	pending    cacheState
	pendingSet uint8 // bit i: type i of the pending block has been seen
	assembling bool
	gap        int // unrelated lines since the pending block's last line
}

// HandleLine takes one complete log line. fallback is the time to record
// for a state whose line carries no timestamp.
func (a *assembler) HandleLine(line []byte, fallback time.Time) {
	l := parseLine(line)
	switch l.Kind {
	case lineOther:
		a.interleaved()
	case linePromptCache:
		a.pending = cacheState{Format: formatPromptCache, Total: l.Usage, SeenAt: orTime(l.Time, fallback)}
		a.pendingSet, a.assembling, a.gap = 0, true, 0
	case lineCacheType:
		switch {
		case !a.assembling:
			// Its header was not seen (it came before the part of the log
			// read): an orphan, ignored.
		case l.CacheType == typeUnknown:
			// A type this receiver does not know (a newer mlx_lm): it does
			// not break the block, it is just not reported.
			a.interleaved()
		case a.pendingSet&(1<<l.CacheType) != 0:
			a.assembling = false // a type twice: two blocks mixed up
		default:
			a.pending.ByType[l.CacheType] = l.Usage
			a.pendingSet |= 1 << l.CacheType
			a.gap = 0
			if a.pendingSet == allTypesSeen {
				a.publish(a.pending)
			}
		}
	case lineKVCaches:
		a.publish(cacheState{Format: formatKVCaches, Total: l.Usage, SeenAt: orTime(l.Time, fallback)})
	case lineServerStart:
		// A new engine process starts with an empty cache, and the last
		// block in the log described the old one: the state is unknown
		// until the new process logs its first block.
		a.assembling, a.known, a.settled = false, false, true
	}
}

// Latest returns the last complete state, if there is one.
func (a *assembler) Latest() (cacheState, bool) { return a.latest, a.known }

// Settled says whether the lines handled so far fix the latest state.
func (a *assembler) Settled() bool { return a.settled }

// Reset forgets everything, for a read that starts over.
func (a *assembler) Reset() { *a = assembler{} }

func (a *assembler) publish(s cacheState) {
	a.latest, a.known, a.settled, a.assembling = s, true, true, false
}

func (a *assembler) interleaved() {
	if !a.assembling {
		return
	}
	a.gap++
	if a.gap > maxInterleavedLines {
		a.assembling = false
	}
}

func orTime(t, fallback time.Time) time.Time {
	if t.IsZero() {
		return fallback
	}
	return t
}
