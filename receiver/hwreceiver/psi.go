package hwreceiver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Linux's memory pressure, as the same level macOS's
// kern.memorystatus_vm_pressure_level gives (1 normal, 2 warn, 4
// critical), so one alert (MLXMemoryPressureCritical) and one panel serve
// both. The kernel's pressure stall information (/proc/pressure/memory,
// Linux 4.20+, Documentation/accounting/psi.rst) says what share of the
// last 10 s some task (`some`) or every task (`full`) was stalled waiting
// for memory.
const (
	psiWarnSome     = 10.0 // % of 10 s some task waited on memory: warn
	psiCriticalFull = 10.0 // % of 10 s every task waited: critical
)

// psiLevel maps /proc/pressure/memory's avg10 figures to the level.
func psiLevel(someAvg10, fullAvg10 float64) float64 {
	switch {
	case fullAvg10 >= psiCriticalFull:
		return 4
	case someAvg10 >= psiWarnSome:
		return 2
	default:
		return 1
	}
}

// parsePSI reads the avg10 of the `some` and `full` lines of a
// /proc/pressure file:
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=0
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=0
//
// Kernels before 5.13 have no `full` line for cpu; memory always has both.
func parsePSI(b []byte) (someAvg10, fullAvg10 float64, err error) {
	var seenSome bool
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		v, ok := strings.CutPrefix(fields[1], "avg10=")
		if !ok {
			return 0, 0, fmt.Errorf("psi: %q: no avg10", sc.Text())
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 100 {
			return 0, 0, fmt.Errorf("psi: %q: avg10 is not a share", sc.Text())
		}
		switch fields[0] {
		case "some":
			someAvg10, seenSome = f, true
		case "full":
			fullAvg10 = f
		}
	}
	if !seenSome {
		return 0, 0, errors.New("psi: no `some` line")
	}
	return someAvg10, fullAvg10, nil
}

// psiSource reads /proc/pressure/memory (under HOST_PROC, as gopsutil
// does). A kernel without PSI has no such file: the source reports that
// and the level is absent, as on any platform without one.
func psiSource(ctx context.Context) (func(*sample), error) {
	root := os.Getenv("HOST_PROC")
	if root == "" {
		root = "/proc"
	}
	b, err := os.ReadFile(filepath.Join(root, "pressure", "memory"))
	if err != nil {
		return nil, err
	}
	some, full, err := parsePSI(b)
	if err != nil {
		return nil, err
	}
	level := psiLevel(some, full)
	return func(s *sample) { s.memPressureLevel = &level }, nil
}
