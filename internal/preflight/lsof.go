package preflight

import (
	"bytes"
	"strconv"
	"strings"
)

// ParseLsofF reads what `lsof -F pc` prints: one line a field, its first
// character the field's name, a process set starting at its p (pid) line,
//
//	p23404
//	cpython3
//
// c is the command's name (not its arguments). Lines of other fields (u,
// f, file sets) are skipped, and so is a process whose pid is not a
// positive number. Each pid is listed once. Real captures are in
// testdata/lsof_*.txt.
func ParseLsofF(b []byte) []Holder {
	var out []Holder
	seen := map[int]bool{}
	cur := -1 // index in out of the current process, -1 for none
	for line := range bytes.Lines(b) {
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			continue
		}
		val := string(line[1:])
		switch line[0] {
		case 'p':
			cur = -1
			pid, err := strconv.Atoi(val)
			if err != nil || pid <= 0 || seen[pid] {
				continue
			}
			seen[pid] = true
			out = append(out, Holder{PID: pid, UID: -1, Listening: true})
			cur = len(out) - 1
		case 'c':
			if cur >= 0 && out[cur].Command == "" {
				out[cur].Command = FormatCmdline([]byte(strings.TrimSpace(val)))
			}
		}
	}
	return out
}
