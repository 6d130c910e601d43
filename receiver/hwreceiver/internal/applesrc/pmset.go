package applesrc

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// PmsetTherm is the output of `pmset -g therm`. On Intel Macs it prints a
// "CPU Power notify" block:
//
//	2024-05-01 10:00:00 +0200 CPU Power notify
//		CPU_Scheduler_Limit 	= 100
//		CPU_Available_CPUs 	= 8
//		CPU_Speed_Limit 	= 100
//
// On Apple Silicon it usually prints only "Note: No ... has been recorded"
// lines: then every pointer is nil and Notes holds the notes.
type PmsetTherm struct {
	CPUSchedulerLimit *int // CPU_Scheduler_Limit, percent
	CPUAvailableCPUs  *int // CPU_Available_CPUs
	CPUSpeedLimit     *int // CPU_Speed_Limit, percent
	// Values holds every "NAME = <integer>" line, the three above included.
	Values map[string]int
	// Notes holds the text after "Note: ", e.g. "No thermal warning level
	// has been recorded".
	Notes []string
}

// ParsePmsetTherm reads `pmset -g therm`. Values are "NAME = N" lines
// (tabs and spaces around '=' as pmset prints them); a line with a colon
// instead of '=' is not a value (the original regex
// `CPU_Scheduler_Limit:\s*(\d+)` never matched real output).
//
// Errors: ErrEmpty, ErrBinary, ErrNoData when the input holds neither a
// value nor a "Note:" line. Notes alone are a valid result with no values.
func ParsePmsetTherm(b []byte) (PmsetTherm, error) {
	lines, err := textLines(b)
	if err != nil {
		return PmsetTherm{}, fmt.Errorf("pmset -g therm: %w", err)
	}
	var p PmsetTherm
	for _, raw := range lines {
		l := strings.TrimSpace(raw)
		if note, ok := strings.CutPrefix(l, "Note:"); ok {
			p.Notes = append(p.Notes, strings.TrimSpace(note))
			continue
		}
		name, val, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		name, val = strings.TrimSpace(name), strings.TrimSpace(val)
		if !isIdent(name) {
			continue
		}
		n, err := strconv.ParseInt(val, 10, 32)
		if err != nil || (!isDigits(val) && !(len(val) > 1 && val[0] == '-' && isDigits(val[1:]))) {
			continue
		}
		if p.Values == nil {
			p.Values = make(map[string]int)
		}
		p.Values[name] = int(n)
		switch name {
		case "CPU_Scheduler_Limit":
			p.CPUSchedulerLimit = ptr(int(n))
		case "CPU_Available_CPUs":
			p.CPUAvailableCPUs = ptr(int(n))
		case "CPU_Speed_Limit":
			p.CPUSpeedLimit = ptr(int(n))
		}
	}
	if len(p.Values) == 0 && len(p.Notes) == 0 {
		return PmsetTherm{}, fmt.Errorf("pmset -g therm: %w", ErrNoData)
	}
	return p, nil
}

// isIdent reports whether s is a name such as CPU_Speed_Limit.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '_' {
			return false
		}
	}
	return true
}

// NotifyState is one line of `notifyutil -g NAME`: "<name> <state>".
type NotifyState struct {
	Name  string
	State uint64
}

// ThermalPressureNotifyName is the notification that carries the thermal
// pressure level, readable without root.
const ThermalPressureNotifyName = "com.apple.system.thermalpressurelevel"

// ParseNotifyutil reads the single line printed by `notifyutil -g NAME`.
// Errors: ErrEmpty, ErrBinary, ErrMalformed (not exactly one "<name> <n>"
// line).
func ParseNotifyutil(b []byte) (NotifyState, error) {
	lines, err := textLines(b)
	if err != nil {
		return NotifyState{}, fmt.Errorf("notifyutil: %w", err)
	}
	var got []string
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" {
			got = append(got, t)
		}
	}
	if len(got) != 1 {
		return NotifyState{}, fmt.Errorf("notifyutil: %w: want one line, got %d", ErrMalformed, len(got))
	}
	f := strings.Fields(got[0])
	if len(f) != 2 {
		return NotifyState{}, fmt.Errorf("notifyutil: %w: %q", ErrMalformed, got[0])
	}
	n, ok := parseUint(f[1])
	if !ok {
		return NotifyState{}, fmt.Errorf("notifyutil: %w: state %q", ErrMalformed, f[1])
	}
	return NotifyState{Name: f[0], State: n}, nil
}

// ParseThermalPressureNotify reads `notifyutil -g
// com.apple.system.thermalpressurelevel` ("com.apple.system.thermalpressurelevel 0")
// as a ThermalPressure. The name must be that notification and the state
// 0..4; anything else is ErrMalformed.
func ParseThermalPressureNotify(b []byte) (ThermalPressure, error) {
	s, err := ParseNotifyutil(b)
	if err != nil {
		return 0, err
	}
	if s.Name != ThermalPressureNotifyName {
		return 0, fmt.Errorf("notifyutil: %w: name %q is not %s", ErrMalformed, s.Name, ThermalPressureNotifyName)
	}
	if s.State > math.MaxInt8 || !ThermalPressure(s.State).Valid() {
		return 0, fmt.Errorf("notifyutil: %w: thermal pressure level %d is outside 0..4", ErrMalformed, s.State)
	}
	return ThermalPressure(s.State), nil
}
