package applesrc

import (
	"fmt"
	"strings"
)

// IOAccelerator is the GPU node of `ioreg -r -c IOAccelerator -d 2` (or
// -l): its "PerformanceStatistics" dictionary and identity. A nil pointer
// means the key was absent from the dictionary.
type IOAccelerator struct {
	// Model is the IOKit class of the accelerator node, e.g.
	// "AGXAcceleratorG13X", taken from "+-o ... <class AGXAcceleratorG13X,
	// ...>" (else its "IOClass" property, else the node name).
	Model string
	// ChipName is the node's "model" property ("Apple M1 Pro") when printed.
	ChipName string
	// GPUCoreCount is the node's "gpu-core-count" property when printed.
	GPUCoreCount *int

	DeviceUtilizationPct   *float64 // "Device Utilization %"
	RendererUtilizationPct *float64 // "Renderer Utilization %"
	TilerUtilizationPct    *float64 // "Tiler Utilization %"
	// InUseSystemMemoryBytes is "In use system memory". The separate key
	// "In use system memory (driver)" is a different, driver-only figure
	// (often 0) and is not read.
	InUseSystemMemoryBytes *uint64
	AllocSystemMemoryBytes *uint64 // "Alloc system memory"
}

// ioregNode is one "+-o" node of the ioreg tree and the properties read.
type ioregNode struct {
	class, name, ioClass, model string
	cores                       *int
	perf                        map[string]string
	perfSeen                    bool
}

// ParseIOReg reads ioreg output and returns the first node whose
// "PerformanceStatistics" dictionary holds at least one of the five keys.
//
// The dictionary is tokenised ("key"=value pairs, nested values skipped),
// so each key is matched whole, closing quote included: "In use system
// memory" never matches "In use system memory (driver)". Only a property
// line that starts with "PerformanceStatistics" is read, so names repeated
// inside the IOReportLegend block (or any other property) are never taken.
// If the dictionary is cut short (no closing brace), only the pairs
// followed by a comma are kept.
//
// Errors: ErrEmpty, ErrBinary, ErrNoData (no usable PerformanceStatistics).
// The IOAccelerator returned with an error is the zero value.
func ParseIOReg(b []byte) (IOAccelerator, error) {
	lines, err := textLines(b)
	if err != nil {
		return IOAccelerator{}, fmt.Errorf("ioreg: %w", err)
	}
	var nodes []*ioregNode
	cur := &ioregNode{}
	nodes = append(nodes, cur)
	for _, l := range lines {
		t := strings.TrimLeft(l, " \t|")
		if strings.HasPrefix(t, "+-o ") {
			cur = parseIORegNodeLine(t)
			nodes = append(nodes, cur)
			continue
		}
		key, val, ok := ioregProperty(t)
		if !ok {
			continue
		}
		switch key {
		case "PerformanceStatistics":
			if !cur.perfSeen && strings.HasPrefix(val, "{") {
				cur.perf, _ = parseIORegDict(val)
				cur.perfSeen = true
			}
		case "IOClass":
			cur.ioClass = ioregString(val)
		case "model":
			cur.model = ioregString(val)
		case "gpu-core-count":
			if n, ok := parseSmallInt(val); ok {
				cur.cores = &n
			}
		}
	}
	for _, n := range nodes {
		acc, ok := n.accelerator()
		if ok {
			return acc, nil
		}
	}
	return IOAccelerator{}, fmt.Errorf("ioreg: %w: no PerformanceStatistics with a known key", ErrNoData)
}

func (n *ioregNode) accelerator() (IOAccelerator, bool) {
	if n.perf == nil {
		return IOAccelerator{}, false
	}
	var a IOAccelerator
	found := false
	for key, dst := range map[string]**float64{
		"Device Utilization %":   &a.DeviceUtilizationPct,
		"Renderer Utilization %": &a.RendererUtilizationPct,
		"Tiler Utilization %":    &a.TilerUtilizationPct,
	} {
		if v, ok := parseDecimal(n.perf[key]); ok {
			*dst = &v
			found = true
		}
	}
	for key, dst := range map[string]**uint64{
		"In use system memory": &a.InUseSystemMemoryBytes,
		"Alloc system memory":  &a.AllocSystemMemoryBytes,
	} {
		if v, ok := parseUint(n.perf[key]); ok {
			*dst = &v
			found = true
		}
	}
	if !found {
		return IOAccelerator{}, false
	}
	a.Model = n.class
	if a.Model == "" {
		a.Model = n.ioClass
	}
	if a.Model == "" {
		a.Model = n.name
	}
	a.ChipName = n.model
	a.GPUCoreCount = n.cores
	return a, true
}

// parseIORegNodeLine reads "+-o AGXAcceleratorG13X  <class AGXAcceleratorG13X, id 0x..., ...>".
func parseIORegNodeLine(t string) *ioregNode {
	n := &ioregNode{}
	rest := strings.TrimSpace(strings.TrimPrefix(t, "+-o "))
	if f := strings.Fields(rest); len(f) > 0 && !strings.HasPrefix(f[0], "<") {
		n.name = f[0]
	}
	if i := strings.Index(rest, "<class "); i >= 0 {
		c := rest[i+len("<class "):]
		if j := strings.IndexAny(c, ",>"); j >= 0 {
			c = c[:j]
		}
		n.class = strings.TrimSpace(c)
	}
	return n
}

// ioregProperty splits `"key" = value`.
func ioregProperty(t string) (key, val string, ok bool) {
	if !strings.HasPrefix(t, `"`) {
		return "", "", false
	}
	end := strings.IndexByte(t[1:], '"')
	if end < 0 {
		return "", "", false
	}
	key = t[1 : 1+end]
	rest := strings.TrimSpace(t[2+end:])
	if !strings.HasPrefix(rest, "=") {
		return "", "", false
	}
	return key, strings.TrimSpace(rest[1:]), true
}

// ioregString reads `"Apple M1 Pro"` or `<"Apple M1 Pro">`.
func ioregString(v string) string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">") {
		v = v[1 : len(v)-1]
	}
	if len(v) >= 2 && strings.HasPrefix(v, `"`) && strings.HasSuffix(v, `"`) {
		return v[1 : len(v)-1]
	}
	return ""
}

// parseIORegDict reads `{"key"=value,"key"=value}` and returns each key's
// raw value text. Nested dictionaries, arrays, data and strings are
// skipped as whole values. closed is false when the input ends before the
// closing brace; the pair cut by the end is then dropped.
func parseIORegDict(s string) (map[string]string, bool) {
	out := make(map[string]string)
	if !strings.HasPrefix(s, "{") {
		return out, false
	}
	i := 1
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			return out, false
		}
		if s[i] == '}' {
			return out, true
		}
		if s[i] != '"' {
			return out, false
		}
		end := strings.IndexByte(s[i+1:], '"')
		if end < 0 {
			return out, false
		}
		key := s[i+1 : i+1+end]
		i += end + 2
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) || s[i] != '=' {
			return out, false
		}
		i++
		start := i
		depth, inStr := 0, false
		for ; i < len(s); i++ {
			c := s[i]
			if inStr {
				if c == '"' {
					inStr = false
				}
				continue
			}
			if c == '"' {
				inStr = true
				continue
			}
			if depth == 0 && (c == ',' || c == '}') {
				break
			}
			switch c {
			case '{', '(', '<':
				depth++
			case '}', ')', '>':
				if depth > 0 {
					depth--
				}
			}
		}
		if i >= len(s) {
			return out, false // the value was cut short
		}
		if _, dup := out[key]; !dup {
			out[key] = strings.TrimSpace(s[start:i])
		}
		if s[i] == '}' {
			return out, true
		}
		i++ // the comma
	}
}
