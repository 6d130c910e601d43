package mlxsim

import "fmt"

// The prompt cache: a model of mlx_lm's LRUPromptCache (models/cache.py).
//
//   - Entries are KV caches keyed by their token sequence, held in a trie.
//     An entry's size is len(tokens) × KVBytesPerToken (the batch generator
//     extracts caches trimmed to their exact length).
//   - Each entry has a type, "assistant", "user" or "system". The server
//     stores, for a chat request whose last message is a user message, a
//     "system" entry at the end of the leading system prompt and a "user"
//     entry before a trailing <think> block while it processes the prompt,
//     and an "assistant" entry holding prompt + generated tokens when the
//     generation finishes (a request stopped early, e.g. by a client that
//     went away, stores no assistant entry). Requests with a seed are served
//     one at a time (_serve_single) and store only the final entry.
//   - Lookup (fetch_nearest_cache) returns the exact entry, else a longer
//     entry sharing a longer common prefix, trimmed to it ("longer", only
//     for trimmable caches), else the longest cached prefix ("shorter");
//     cached_tokens is what it covers.
//   - With trimmable caches (Options.TrimmableCache), inserting an entry
//     removes every entry whose tokens are a prefix of it (pop_prefixes):
//     the system and user entries of a conversation disappear into the
//     next segment's entry. A hybrid model's caches are not trimmable and
//     every entry stays until evicted.
//   - Eviction (CacheOrder.pop) takes the least recently inserted entry of
//     the first type in [assistant, user, system] whose queue is non-empty
//     and at least as long as the next type's; it runs when there are more
//     than --prompt-cache-size entries or more than --prompt-cache-bytes.
//
// The 4-line "Prompt Cache:" block is printed at each request's admission,
// before the lookup, as ResponseGenerator._log_cache_stats does.

var cacheOrdering = []string{"assistant", "user", "system"}

type trieNode struct {
	children map[int]*trieNode
	entry    *cacheEntry
}

type cacheEntry struct {
	tokens    []int
	nbytes    int64
	cacheType string
}

type promptCache struct {
	trimmable   bool
	maxSize     int
	maxBytes    int64
	bytesPerTok int64
	root        *trieNode
	lrus        map[string][]*cacheEntry
	nBytes      int64
	bytesByType map[string]int64
}

func newPromptCache(maxSize int, maxBytes, bytesPerTok int64, trimmable bool) *promptCache {
	if maxBytes <= 0 {
		maxBytes = 1 << 62
	}
	c := &promptCache{trimmable: trimmable, maxSize: maxSize, maxBytes: maxBytes, bytesPerTok: bytesPerTok, root: &trieNode{}}
	c.lrus = map[string][]*cacheEntry{}
	c.bytesByType = map[string]int64{}
	return c
}

func (c *promptCache) len() int {
	n := 0
	for _, t := range cacheOrdering {
		n += len(c.lrus[t])
	}
	return n
}

// statsLines are the four lines of _log_cache_stats.
func (c *promptCache) statsLines() []string {
	lines := []string{fmt.Sprintf("Prompt Cache: %d sequences, %.2f GB", c.len(), float64(c.nBytes)/1e9)}
	for _, t := range cacheOrdering {
		lines = append(lines, fmt.Sprintf("- %s: %d sequences, %.2f GB", t, len(c.lrus[t]), float64(c.bytesByType[t])/1e9))
	}
	return lines
}

// fetch returns how many leading tokens of the prompt the cache covers.
func (c *promptCache) fetch(tokens []int) int {
	cur := c.root
	lastIndex, index := -1, 0
	if len(tokens) == 0 {
		if cur.entry != nil {
			return 0
		}
		return 0
	}
	for index < len(tokens) {
		nx, ok := cur.children[tokens[index]]
		if !ok {
			break
		}
		cur = nx
		if cur.entry != nil {
			lastIndex = index
		}
		index++
	}
	if lastIndex == len(tokens)-1 {
		return len(tokens) // exact
	}
	shortLen := 0
	if lastIndex > 0 {
		shortLen = lastIndex + 1
	}
	if c.trimmable && index > 0 && index > shortLen && c.hasEntryBelow(cur) {
		prefix := index
		if len(tokens)-1 < prefix {
			prefix = len(tokens) - 1
		}
		return prefix
	}
	return shortLen
}

func (c *promptCache) hasEntryBelow(n *trieNode) bool {
	if n.entry != nil {
		return true
	}
	for _, ch := range n.children {
		if c.hasEntryBelow(ch) {
			return true
		}
	}
	return false
}

func (c *promptCache) node(tokens []int, create bool) *trieNode {
	cur := c.root
	for _, t := range tokens {
		nx, ok := cur.children[t]
		if !ok {
			if !create {
				return nil
			}
			if cur.children == nil {
				cur.children = map[int]*trieNode{}
			}
			nx = &trieNode{}
			cur.children[t] = nx
		}
		cur = nx
	}
	return cur
}

func (c *promptCache) removeFromLRU(e *cacheEntry) {
	q := c.lrus[e.cacheType]
	for i, x := range q {
		if x == e {
			c.lrus[e.cacheType] = append(q[:i:i], q[i+1:]...)
			return
		}
	}
}

func (c *promptCache) account(e *cacheEntry, sign int64) {
	c.nBytes += sign * e.nbytes
	c.bytesByType[e.cacheType] += sign * e.nbytes
}

// trieDelete removes an entry and prunes empty nodes.
func (c *promptCache) trieDelete(tokens []int) {
	path := []*trieNode{c.root}
	cur := c.root
	for _, t := range tokens {
		cur = cur.children[t]
		if cur == nil {
			return
		}
		path = append(path, cur)
	}
	cur.entry = nil
	for i := len(tokens); i > 0; i-- {
		n := path[i]
		if n.entry != nil || len(n.children) > 0 {
			break
		}
		delete(path[i-1].children, tokens[i-1])
	}
}

// insert is insert_cache(model, tokens, cache, cache_type=...).
func (c *promptCache) insert(tokens []int, cacheType string) {
	toks := append([]int(nil), tokens...)
	e := &cacheEntry{tokens: toks, nbytes: int64(len(toks)) * c.bytesPerTok, cacheType: cacheType}
	n := c.node(toks, true)
	c.account(e, 1)
	if prev := n.entry; prev != nil {
		c.account(prev, -1)
		c.removeFromLRU(prev)
	}
	n.entry = e
	c.lrus[cacheType] = append(c.lrus[cacheType], e)

	// Trimmable caches: drop every strict prefix entry.
	if c.trimmable {
		cur := c.root
		for i := 0; i < len(toks); i++ {
			if cur.entry != nil {
				old := cur.entry
				cur.entry = nil
				c.account(old, -1)
				c.removeFromLRU(old)
			}
			cur = cur.children[toks[i]]
		}
	}

	if c.len() > c.maxSize {
		c.evictOne()
	}
	for c.nBytes > c.maxBytes && c.len() > 0 {
		c.evictOne()
	}
}

// evictOne is CacheOrder.pop followed by the trie removal.
func (c *promptCache) evictOne() {
	var victim *cacheEntry
	i := 0
	for ; i+1 < len(cacheOrdering); i++ {
		a, b := c.lrus[cacheOrdering[i]], c.lrus[cacheOrdering[i+1]]
		if len(a) > 0 && len(a) >= len(b) {
			victim = a[0]
			break
		}
	}
	if victim == nil {
		q := c.lrus[cacheOrdering[len(cacheOrdering)-1]]
		if len(q) == 0 {
			return
		}
		victim = q[0]
	}
	c.removeFromLRU(victim)
	c.account(victim, -1)
	c.trieDelete(victim.tokens)
}

// trimTo is trim_to(n_bytes=...).
func (c *promptCache) trimTo(nBytes int64) {
	if nBytes < 0 {
		nBytes = 0
	}
	for c.nBytes > nBytes && c.len() > 0 {
		c.evictOne()
	}
}
