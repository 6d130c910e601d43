package applesrc

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Sysctl holds the values of
//
//	sysctl hw.memsize vm.swapusage kern.boottime kern.memorystatus_vm_pressure_level \
//	       hw.perflevel0.logicalcpu hw.perflevel1.logicalcpu machdep.cpu.brand_string iogpu.wired_limit_mb
//
// read from the "name: value" form (or the "name=value" form of sysctl -e).
// A nil pointer or "" means the name was not printed (unknown OID on this
// macOS release) or its value was unreadable (then the name is in Invalid).
type Sysctl struct {
	MemSizeBytes         *uint64    // hw.memsize
	Swap                 *SwapUsage // vm.swapusage
	BootTime             *time.Time // kern.boottime, UTC
	MemoryPressure       *MemoryPressure
	PerfLevel0LogicalCPU *int    // hw.perflevel0.logicalcpu (performance cores)
	PerfLevel1LogicalCPU *int    // hw.perflevel1.logicalcpu (efficiency cores)
	CPUBrand             string  // machdep.cpu.brand_string, e.g. "Apple M1 Max"
	IOGPUWiredLimitMB    *uint64 // iogpu.wired_limit_mb (0 = the default limit)

	// Values holds every "name: value" line read, known names or not.
	Values map[string]string
	// Invalid lists the known names whose value could not be read.
	Invalid []string
}

// SwapUsage is vm.swapusage:
// "total = 4096.00M  used = 1536.50M  free = 2559.50M  (encrypted)".
// sysctl prints two decimals of MiB, so the byte counts are rounded to
// that precision.
type SwapUsage struct {
	TotalBytes uint64
	UsedBytes  uint64
	FreeBytes  uint64
	Encrypted  bool
}

// MemoryPressure is kern.memorystatus_vm_pressure_level: 1 normal, 2 warn,
// 4 critical.
type MemoryPressure int

// The memory pressure levels the kernel reports.
const (
	MemoryPressureNormal   MemoryPressure = 1
	MemoryPressureWarn     MemoryPressure = 2
	MemoryPressureCritical MemoryPressure = 4
)

// String returns "normal", "warn", "critical" or "unknown".
func (m MemoryPressure) String() string {
	switch m {
	case MemoryPressureNormal:
		return "normal"
	case MemoryPressureWarn:
		return "warn"
	case MemoryPressureCritical:
		return "critical"
	}
	return "unknown"
}

// Valid reports whether m is 1, 2 or 4.
func (m MemoryPressure) Valid() bool { return m.String() != "unknown" }

// ParseSysctl reads the "name: value" output of sysctl for any set of
// names (one per line; "name=value" is read too). Lines that are not
// "name: value" with a dotted name are ignored.
//
// The `-n` form is not read here for several names at once: sysctl prints
// nothing for an unknown OID (iogpu.wired_limit_mb before macOS 14, the
// perflevel names on Intel), which would shift every later value onto the
// wrong name. For one name with -n use ParseSysctlUint, ParseSwapUsage,
// ParseBootTime or ParseMemoryPressure, which accept the value alone or
// with its "name: " prefix.
//
// Errors: ErrEmpty, ErrBinary, ErrNoData when no "name: value" line is
// found. A malformed value of a known name is no error: the field stays
// absent and the name is listed in Invalid.
func ParseSysctl(b []byte) (Sysctl, error) {
	lines, err := textLines(b)
	if err != nil {
		return Sysctl{}, fmt.Errorf("sysctl: %w", err)
	}
	var s Sysctl
	for _, l := range lines {
		name, val, ok := splitSysctlName(l)
		if !ok {
			continue
		}
		if s.Values == nil {
			s.Values = make(map[string]string)
		}
		s.Values[name] = val
		good := true
		switch name {
		case "hw.memsize":
			var n uint64
			if n, good = parseUint(val); good {
				s.MemSizeBytes = &n
			}
		case "vm.swapusage":
			var sw SwapUsage
			if sw, good = parseSwapValue(val); good {
				s.Swap = &sw
			}
		case "kern.boottime":
			var t time.Time
			if t, good = parseBootTimeValue(val); good {
				s.BootTime = &t
			}
		case "kern.memorystatus_vm_pressure_level":
			var n int
			if n, good = parseSmallInt(val); good {
				s.MemoryPressure = ptr(MemoryPressure(n))
			}
		case "hw.perflevel0.logicalcpu":
			var n int
			if n, good = parseSmallInt(val); good {
				s.PerfLevel0LogicalCPU = &n
			}
		case "hw.perflevel1.logicalcpu":
			var n int
			if n, good = parseSmallInt(val); good {
				s.PerfLevel1LogicalCPU = &n
			}
		case "machdep.cpu.brand_string":
			s.CPUBrand = val
			good = val != ""
		case "iogpu.wired_limit_mb":
			var n uint64
			if n, good = parseUint(val); good {
				s.IOGPUWiredLimitMB = &n
			}
		}
		if !good {
			s.Invalid = append(s.Invalid, name)
		}
	}
	if len(s.Values) == 0 {
		return Sysctl{}, fmt.Errorf("sysctl: %w", ErrNoData)
	}
	return s, nil
}

// splitSysctlName splits "hw.memsize: 17179869184" or "hw.memsize=..." at
// the end of a dotted name made of letters, digits, '_' and '-'.
func splitSysctlName(l string) (name, val string, ok bool) {
	l = strings.TrimSpace(l)
	i := 0
	for i < len(l) {
		c := l[i]
		if isLetter(c) || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' {
			i++
			continue
		}
		break
	}
	name = l[:i]
	if !strings.Contains(name, ".") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || i == len(l) {
		return "", "", false
	}
	switch {
	case l[i] == '=':
		val = l[i+1:]
	case l[i] == ':' && (i+1 == len(l) || l[i+1] == ' ' || l[i+1] == '\t'):
		val = l[i+1:]
	default:
		return "", "", false
	}
	return name, strings.TrimSpace(val), true
}

// singleValue returns the value of a one-line `sysctl -n NAME` or
// `sysctl NAME` output.
func singleValue(b []byte) (string, error) {
	lines, err := textLines(b)
	if err != nil {
		return "", err
	}
	var vals []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			vals = append(vals, t)
		}
	}
	if len(vals) != 1 {
		return "", fmt.Errorf("%w: want one line, got %d", ErrMalformed, len(vals))
	}
	if _, v, ok := splitSysctlName(vals[0]); ok {
		return v, nil
	}
	return vals[0], nil
}

// ParseSysctlUint reads a single unsigned integer value, from `sysctl -n
// hw.memsize` ("17179869184") or `sysctl hw.memsize` ("hw.memsize:
// 17179869184"); likewise iogpu.wired_limit_mb, hw.perflevelN.logicalcpu.
func ParseSysctlUint(b []byte) (uint64, error) {
	v, err := singleValue(b)
	if err != nil {
		return 0, fmt.Errorf("sysctl: %w", err)
	}
	n, ok := parseUint(v)
	if !ok {
		return 0, fmt.Errorf("sysctl: %w: not an unsigned integer: %q", ErrMalformed, v)
	}
	return n, nil
}

// ParseSwapUsage reads `sysctl -n vm.swapusage` or `sysctl vm.swapusage`.
func ParseSwapUsage(b []byte) (SwapUsage, error) {
	v, err := singleValue(b)
	if err != nil {
		return SwapUsage{}, fmt.Errorf("sysctl vm.swapusage: %w", err)
	}
	sw, ok := parseSwapValue(v)
	if !ok {
		return SwapUsage{}, fmt.Errorf("sysctl vm.swapusage: %w: %q", ErrMalformed, v)
	}
	return sw, nil
}

// ParseBootTime reads `sysctl -n kern.boottime` or `sysctl kern.boottime`:
// "{ sec = 1700000000, usec = 123 } Tue Nov 14 22:13:20 2023". The time
// comes from sec and usec (the local-time text after the brace is ignored)
// and is returned in UTC.
func ParseBootTime(b []byte) (time.Time, error) {
	v, err := singleValue(b)
	if err != nil {
		return time.Time{}, fmt.Errorf("sysctl kern.boottime: %w", err)
	}
	t, ok := parseBootTimeValue(v)
	if !ok {
		return time.Time{}, fmt.Errorf("sysctl kern.boottime: %w: %q", ErrMalformed, v)
	}
	return t, nil
}

// ParseMemoryPressure reads `sysctl -n kern.memorystatus_vm_pressure_level`.
// A number other than 1, 2 or 4 is returned as is with no error; its
// String() is "unknown".
func ParseMemoryPressure(b []byte) (MemoryPressure, error) {
	v, err := singleValue(b)
	if err != nil {
		return 0, fmt.Errorf("sysctl kern.memorystatus_vm_pressure_level: %w", err)
	}
	n, ok := parseSmallInt(v)
	if !ok {
		return 0, fmt.Errorf("sysctl kern.memorystatus_vm_pressure_level: %w: %q", ErrMalformed, v)
	}
	return MemoryPressure(n), nil
}

// parseSmallInt reads a non-negative int that fits in 32 bits.
func parseSmallInt(s string) (int, bool) {
	n, ok := parseUint(s)
	if !ok || n > math.MaxInt32 {
		return 0, false
	}
	return int(n), true
}

// parseSwapValue reads "total = 4096.00M  used = 1536.50M  free = 2559.50M  (encrypted)".
func parseSwapValue(v string) (SwapUsage, bool) {
	f := strings.Fields(v)
	var sw SwapUsage
	seen := map[string]bool{}
	for i := 0; i < len(f); {
		if f[i] == "(encrypted)" {
			sw.Encrypted = true
			i++
			continue
		}
		if i+2 >= len(f) || f[i+1] != "=" {
			return SwapUsage{}, false
		}
		n, ok := parseSize(f[i+2])
		if !ok {
			return SwapUsage{}, false
		}
		switch f[i] {
		case "total":
			sw.TotalBytes = n
		case "used":
			sw.UsedBytes = n
		case "free":
			sw.FreeBytes = n
		default:
			return SwapUsage{}, false
		}
		seen[f[i]] = true
		i += 3
	}
	if !seen["total"] || !seen["used"] || !seen["free"] {
		return SwapUsage{}, false
	}
	return sw, true
}

// parseSize reads "1536.50M": a decimal and a binary unit suffix (B, K, M,
// G, T; 1024-based, as sysctl prints them).
func parseSize(s string) (uint64, bool) {
	if len(s) < 2 {
		return 0, false
	}
	var mult float64
	switch s[len(s)-1] {
	case 'B':
		mult = 1
	case 'K':
		mult = 1 << 10
	case 'M':
		mult = 1 << 20
	case 'G':
		mult = 1 << 30
	case 'T':
		mult = 1 << 40
	default:
		return 0, false
	}
	v, ok := parseDecimal(s[:len(s)-1])
	if !ok {
		return 0, false
	}
	return floatToBytes(v * mult)
}

// parseBootTimeValue reads "{ sec = 1700000000, usec = 123 } ...".
func parseBootTimeValue(v string) (time.Time, bool) {
	if !strings.HasPrefix(v, "{") {
		return time.Time{}, false
	}
	end := strings.IndexByte(v, '}')
	if end < 0 {
		return time.Time{}, false
	}
	var sec, usec string
	for _, part := range strings.Split(v[1:end], ",") {
		kv := strings.Fields(part)
		if len(kv) != 3 || kv[1] != "=" {
			return time.Time{}, false
		}
		switch kv[0] {
		case "sec":
			sec = kv[2]
		case "usec":
			usec = kv[2]
		default:
			return time.Time{}, false
		}
	}
	s, err1 := strconv.ParseInt(sec, 10, 64)
	u, err2 := strconv.ParseInt(usec, 10, 64)
	if err1 != nil || err2 != nil || !isDigits(sec) || !isDigits(usec) || u >= 1_000_000 {
		return time.Time{}, false
	}
	// Refuse absurd values: more than 1000 years after 1970.
	if s > 1000*366*24*3600 {
		return time.Time{}, false
	}
	return time.Unix(s, u*1000).UTC(), true
}
