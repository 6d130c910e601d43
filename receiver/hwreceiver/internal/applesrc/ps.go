package applesrc

import (
	"fmt"
	"math"
	"strings"
)

// Process is one row of `ps -axo pid=,pcpu=,rss=,command=`.
type Process struct {
	PID int
	// CPUPercent is ps's %CPU: a decaying average, 100 per busy core, so it
	// can exceed 100.
	CPUPercent float64
	// RSSBytes is the resident set size; ps prints it in KiB.
	RSSBytes uint64
	// Command is the full command line, inner spacing kept.
	Command string
}

// ProcessList is the parsed ps output.
type ProcessList struct {
	Processes []Process
	// Skipped counts non-blank rows that could not be read (a header row
	// "PID %CPU RSS COMMAND" is not counted).
	Skipped int
}

// ParsePS reads `ps -axo pid=,pcpu=,rss=,command=`: three numeric columns,
// then the command, which may hold spaces and runs to the end of the line.
// %CPU is read with a '.' or, as ps prints it under a locale such as de_DE,
// a ',' decimal separator. A row whose PID, %CPU or RSS is unreadable, or
// with no command, is skipped and counted in Skipped.
//
// Errors: ErrEmpty, ErrBinary, ErrNoData (no readable row). The
// ProcessList returned with an error is the zero value.
func ParsePS(b []byte) (ProcessList, error) {
	lines, err := textLines(b)
	if err != nil {
		return ProcessList{}, fmt.Errorf("ps: %w", err)
	}
	var out ProcessList
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		p, ok := parsePSRow(l)
		if !ok {
			if f := strings.Fields(l); len(f) > 0 && f[0] == "PID" {
				continue
			}
			out.Skipped++
			continue
		}
		out.Processes = append(out.Processes, p)
	}
	if len(out.Processes) == 0 {
		return ProcessList{}, fmt.Errorf("ps: %w", ErrNoData)
	}
	return out, nil
}

func parsePSRow(l string) (Process, bool) {
	rest := l
	var cols [3]string
	for i := range cols {
		rest = strings.TrimLeft(rest, " \t")
		end := strings.IndexAny(rest, " \t")
		if end < 0 {
			return Process{}, false // no command after the third column
		}
		cols[i], rest = rest[:end], rest[end:]
	}
	cmd := strings.TrimSpace(rest)
	if cmd == "" {
		return Process{}, false
	}
	pid, ok := parseUint(cols[0])
	if !ok || pid > math.MaxInt32 {
		return Process{}, false
	}
	cpu, ok := parseDecimal(strings.Replace(cols[1], ",", ".", 1))
	if !ok {
		return Process{}, false
	}
	rssKiB, ok := parseUint(cols[2])
	if !ok {
		return Process{}, false
	}
	rss, ok := mulBytes(rssKiB, 1024)
	if !ok {
		return Process{}, false
	}
	return Process{PID: int(pid), CPUPercent: cpu, RSSBytes: rss, Command: cmd}, true
}
