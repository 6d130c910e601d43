package pyjson

// Dict is an insertion-ordered string-keyed dict, like a Python dict built
// from JSON or from a literal.
type Dict struct {
	keys []string
	vals map[string]any
}

// NewDict builds a dict from alternating keys and values.
func NewDict(kv ...any) *Dict {
	d := &Dict{vals: make(map[string]any, len(kv)/2)}
	for i := 0; i+1 < len(kv); i += 2 {
		d.Set(kv[i].(string), kv[i+1])
	}
	return d
}

// Set stores a value; an existing key keeps its position (Python semantics).
func (d *Dict) Set(k string, v any) {
	if d.vals == nil {
		d.vals = map[string]any{}
	}
	if _, ok := d.vals[k]; !ok {
		d.keys = append(d.keys, k)
	}
	d.vals[k] = v
}

// Get returns the value and whether the key is present.
func (d *Dict) Get(k string) (any, bool) {
	if d == nil {
		return nil, false
	}
	v, ok := d.vals[k]
	return v, ok
}

// GetDefault is dict.get(k, def).
func (d *Dict) GetDefault(k string, def any) any {
	if v, ok := d.Get(k); ok {
		return v
	}
	return def
}

// Keys returns the keys in insertion order.
func (d *Dict) Keys() []string {
	if d == nil {
		return nil
	}
	return d.keys
}

// Len is len(d).
func (d *Dict) Len() int {
	if d == nil {
		return 0
	}
	return len(d.keys)
}

// Copy is a shallow copy.
func (d *Dict) Copy() *Dict {
	c := &Dict{vals: map[string]any{}}
	for _, k := range d.Keys() {
		c.Set(k, d.vals[k])
	}
	return c
}
