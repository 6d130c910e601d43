package applesrc

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Powermetrics is one sample of
// `powermetrics -n 1 -f text --samplers cpu_power,gpu_power,thermal`.
// A nil pointer means the line was not in the sample (sampler not asked
// for, older macOS, or output cut short); it never stands for zero.
type Powermetrics struct {
	// MachineModel and OSVersion come from the preamble powermetrics prints
	// before the first sample ("Machine model: Mac14,2", "OS version:
	// 25C56"); "" when absent.
	MachineModel string
	OSVersion    string

	// SampleTime and Elapsed come from the sample header
	// "*** Sampled system activity (Fri Sep 11 13:41:46 2026 -0700)
	// (1002.90ms elapsed) ***".
	SampleTime *time.Time
	Elapsed    *time.Duration
	// Samples is the number of sample headers in the input; the values are
	// those of the last complete one (see ParsePowermetrics).
	Samples int

	// Power, in milliwatts, from the power block of the cpu_power sampler
	// ("CPU Power: 475 mW", "Combined Power (CPU + GPU + ANE): 522 mW").
	// Values printed in W are converted to mW. DRAM and Package power are
	// only printed by older macOS releases.
	CPUPowerMW      *float64
	ANEPowerMW      *float64
	CombinedPowerMW *float64
	DRAMPowerMW     *float64
	PackagePowerMW  *float64
	// GPUPowerMW: powermetrics prints "GPU Power" twice, once in the power
	// block (the GPU term of Combined Power) and again at the end of the
	// "**** GPU usage ****" section. The power-block value is kept; the
	// GPU-section value is used only when the power block has none (the
	// gpu_power sampler run without cpu_power).
	GPUPowerMW *float64

	// GPU section of the gpu_power sampler: "GPU HW active frequency: 618
	// MHz", "GPU HW active residency:  25.00% (...)", "GPU idle residency:
	// 75.00%".
	GPUActiveFreqMHz      *float64
	GPUActiveResidencyPct *float64
	GPUIdleResidencyPct   *float64

	// Clusters lists the CPU clusters in the order printed: "E-Cluster",
	// "P-Cluster" on M1/M2/M3, "E0-Cluster", "P0-Cluster", "P1-Cluster"...
	// on Pro/Max/Ultra parts, "S-Cluster" on later ones.
	Clusters []Cluster

	// ThermalPressure from the thermal sampler ("Current pressure level:
	// Nominal"); nil when absent or when the level name is not one of the
	// five known ones.
	ThermalPressure *ThermalPressure
}

// Cluster is the per-cluster block of the cpu_power sampler.
type Cluster struct {
	// Name as printed, e.g. "E-Cluster", "P0-Cluster".
	Name string
	// Kind is the letter before the index: "E" (efficiency), "P"
	// (performance), "S" (super), ...
	Kind string

	OnlinePct          *float64 // "P0-Cluster Online: 100%"
	PowerMW            *float64 // "P1-Cluster Power: 100 mW" (only with extra power info)
	ActiveFreqMHz      *float64 // "E-Cluster HW active frequency: 1187 MHz"
	ActiveResidencyPct *float64 // "E-Cluster HW active residency:  64.29% (...)"
	IdleResidencyPct   *float64 // "E-Cluster idle residency:  35.71%"
	DownResidencyPct   *float64 // "P1-Cluster down residency:  54.45%"
}

// Cluster returns the cluster with the given name ("P0-Cluster").
func (p Powermetrics) Cluster(name string) (Cluster, bool) {
	for _, c := range p.Clusters {
		if c.Name == name {
			return c, true
		}
	}
	return Cluster{}, false
}

const pmHeader = "*** Sampled system activity"

// ParsePowermetrics reads the text output of powermetrics.
//
// The output is split on the "*** Sampled system activity" headers (an
// output with no header at all is read as one sample). Powermetrics writes
// each sample whole before the next header, so every sample followed by
// another header is complete. The last sample is taken when it holds at
// least every kind of value the one before it held (same lines, as many
// clusters and cluster lines); otherwise it was cut short and the one
// before it is returned.
//
// Every value line must end with its unit ("mW"/"W", "MHz", "%") and name
// one of the five pressure levels, so a line cut mid-number is ignored
// rather than read as a smaller number. Unknown lines (per-CPU lines,
// frequency distributions, other samplers) are ignored.
//
// Errors: ErrEmpty, ErrBinary, or ErrNoData when the chosen sample holds
// no value; the Powermetrics returned with an error is the zero value.
func ParsePowermetrics(b []byte) (Powermetrics, error) {
	lines, err := textLines(b)
	if err != nil {
		return Powermetrics{}, fmt.Errorf("powermetrics: %w", err)
	}

	var headers []int
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), pmHeader) {
			headers = append(headers, i)
		}
	}

	var model, osVersion string
	var segments [][]string
	preamble := lines
	if len(headers) == 0 {
		segments = append(segments, lines)
	} else {
		preamble = lines[:headers[0]]
		for k, h := range headers {
			end := len(lines)
			if k+1 < len(headers) {
				end = headers[k+1]
			}
			segments = append(segments, lines[h:end])
		}
	}
	for _, l := range preamble {
		key, val, ok := splitColon(l)
		if !ok || val == "" {
			continue
		}
		switch key {
		case "Machine model":
			model = val
		case "OS version":
			osVersion = val
		}
	}

	samples := make([]pmSample, len(segments))
	for i, seg := range segments {
		samples[i] = parsePMSample(seg)
	}
	chosen := samples[len(samples)-1]
	if n := len(samples); n >= 2 && !chosen.covers(samples[n-2]) {
		chosen = samples[n-2]
	}
	if chosen.count() == 0 {
		return Powermetrics{}, fmt.Errorf("powermetrics: %w", ErrNoData)
	}

	pm := chosen.pm
	pm.MachineModel, pm.OSVersion = model, osVersion
	pm.Samples = len(headers)
	if pm.GPUPowerMW == nil {
		pm.GPUPowerMW = chosen.gpuSectionPower
	}
	return pm, nil
}

// pmSample is one parsed sample, before the choice of the sample to return.
type pmSample struct {
	pm              Powermetrics
	gpuSectionPower *float64
}

// fields returns the top-level values of the sample, the GPU-section power
// included, for the completeness comparison.
func (s pmSample) fields() []bool {
	p := s.pm
	return []bool{
		p.SampleTime != nil, p.Elapsed != nil,
		p.CPUPowerMW != nil, p.GPUPowerMW != nil, p.ANEPowerMW != nil, p.CombinedPowerMW != nil,
		p.DRAMPowerMW != nil, p.PackagePowerMW != nil,
		p.GPUActiveFreqMHz != nil, p.GPUActiveResidencyPct != nil, p.GPUIdleResidencyPct != nil,
		p.ThermalPressure != nil, s.gpuSectionPower != nil,
	}
}

func (s pmSample) clusterFields() int {
	n := 0
	for _, c := range s.pm.Clusters {
		for _, f := range []*float64{c.OnlinePct, c.PowerMW, c.ActiveFreqMHz, c.ActiveResidencyPct, c.IdleResidencyPct, c.DownResidencyPct} {
			if f != nil {
				n++
			}
		}
	}
	return n
}

// count is the number of values read, the header's time and elapsed not
// counted (a header alone is no data).
func (s pmSample) count() int {
	n := s.clusterFields()
	for _, f := range s.fields()[2:] {
		if f {
			n++
		}
	}
	return n
}

// covers reports whether s holds at least every kind of value prev holds.
func (s pmSample) covers(prev pmSample) bool {
	a, b := s.fields(), prev.fields()
	for i := range b {
		if b[i] && !a[i] {
			return false
		}
	}
	return len(s.pm.Clusters) >= len(prev.pm.Clusters) && s.clusterFields() >= prev.clusterFields() && s.count() > 0
}

func parsePMSample(seg []string) pmSample {
	var s pmSample
	section := ""
	sawGPU := false
	for i, raw := range seg {
		t := strings.TrimSpace(raw)
		if i == 0 && strings.HasPrefix(t, pmHeader) {
			s.pm.SampleTime, s.pm.Elapsed = parsePMHeader(t)
			continue
		}
		if len(t) > 8 && strings.HasPrefix(t, "****") && strings.HasSuffix(t, "****") {
			section = strings.TrimSpace(strings.Trim(t, "*"))
			continue
		}
		key, val, ok := splitColon(t)
		if !ok {
			continue
		}
		p := &s.pm
		switch key {
		case "CPU Power":
			setIf(&p.CPUPowerMW, parsePowerMW(val))
		case "GPU Power":
			if section == "GPU usage" || (section == "" && sawGPU) {
				setIf(&s.gpuSectionPower, parsePowerMW(val))
			} else {
				setIf(&p.GPUPowerMW, parsePowerMW(val))
			}
		case "ANE Power":
			setIf(&p.ANEPowerMW, parsePowerMW(val))
		case "Combined Power (CPU + GPU + ANE)":
			setIf(&p.CombinedPowerMW, parsePowerMW(val))
		case "DRAM Power":
			setIf(&p.DRAMPowerMW, parsePowerMW(val))
		case "Package Power":
			setIf(&p.PackagePowerMW, parsePowerMW(val))
		case "GPU HW active frequency", "GPU active frequency":
			sawGPU = true
			setIf(&p.GPUActiveFreqMHz, parseMHz(val))
		case "GPU HW active residency", "GPU active residency":
			sawGPU = true
			setIf(&p.GPUActiveResidencyPct, parsePercent(val))
		case "GPU idle residency":
			sawGPU = true
			setIf(&p.GPUIdleResidencyPct, parsePercent(val))
		case "Current pressure level":
			if lv, ok := ThermalPressureFromName(val); ok {
				p.ThermalPressure = &lv
			}
		default:
			s.clusterLine(key, val)
		}
	}
	return s
}

// clusterLine reads "<X>-Cluster <field>: <value>". A cluster is listed
// once it has one readable value.
func (s *pmSample) clusterLine(key, val string) {
	const mark = "-Cluster "
	j := strings.Index(key, mark)
	if j <= 0 || !validClusterPrefix(key[:j]) {
		return
	}
	prefix, field := key[:j], key[j+len(mark):]
	var v *float64
	switch field {
	case "HW active frequency":
		v = parseMHz(val)
	case "HW active residency", "idle residency", "down residency", "Online":
		v = parsePercent(val)
	case "Power":
		v = parsePowerMW(val)
	}
	if v == nil {
		return
	}
	name := prefix + "-Cluster"
	idx := -1
	for i := range s.pm.Clusters {
		if s.pm.Clusters[i].Name == name {
			idx = i
			break
		}
	}
	if idx < 0 {
		s.pm.Clusters = append(s.pm.Clusters, Cluster{Name: name, Kind: clusterKind(prefix)})
		idx = len(s.pm.Clusters) - 1
	}
	c := &s.pm.Clusters[idx]
	switch field {
	case "HW active frequency":
		c.ActiveFreqMHz = v
	case "HW active residency":
		c.ActiveResidencyPct = v
	case "idle residency":
		c.IdleResidencyPct = v
	case "down residency":
		c.DownResidencyPct = v
	case "Online":
		c.OnlinePct = v
	case "Power":
		c.PowerMW = v
	}
}

// validClusterPrefix accepts "E", "P0", "S", "E1": a letter then letters,
// digits or underscores.
func validClusterPrefix(p string) bool {
	if p == "" || !isLetter(p[0]) {
		return false
	}
	for i := 1; i < len(p); i++ {
		c := p[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '_' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') }

// clusterKind drops the trailing index: "P0" -> "P", "E" -> "E".
func clusterKind(prefix string) string {
	return strings.TrimRight(prefix, "0123456789")
}

// parsePMHeader reads the time and elapsed duration of a sample header;
// either may be nil when unreadable.
func parsePMHeader(t string) (*time.Time, *time.Duration) {
	rest := strings.TrimPrefix(t, pmHeader)
	var ts *time.Time
	var el *time.Duration
	open := strings.IndexByte(rest, '(')
	if open < 0 {
		return nil, nil
	}
	closeAt := strings.IndexByte(rest[open:], ')')
	if closeAt < 0 {
		return nil, nil
	}
	date := strings.Join(strings.Fields(rest[open+1:open+closeAt]), " ")
	if tm, err := time.Parse("Mon Jan 2 15:04:05 2006 -0700", date); err == nil {
		ts = &tm
	}
	rest = rest[open+closeAt+1:]
	if o := strings.IndexByte(rest, '('); o >= 0 {
		if c := strings.IndexByte(rest[o:], ')'); c >= 0 {
			f := strings.Fields(rest[o+1 : o+c])
			if len(f) == 2 && f[1] == "elapsed" && strings.HasSuffix(f[0], "ms") {
				if ms, ok := parseDecimal(strings.TrimSuffix(f[0], "ms")); ok && ms*1e6 < math.MaxInt64/2 {
					d := time.Duration(math.Round(ms * 1e6))
					el = &d
				}
			}
		}
	}
	return ts, el
}

// splitColon splits "key: value" at the first colon, trimming both sides.
func splitColon(l string) (key, val string, ok bool) {
	i := strings.IndexByte(l, ':')
	if i <= 0 {
		return "", "", false
	}
	return strings.TrimSpace(l[:i]), strings.TrimSpace(l[i+1:]), true
}

func setIf(dst **float64, v *float64) {
	if v != nil {
		*dst = v
	}
}

// valueUnit splits "475 mW" or "475mW" into number and unit.
func valueUnit(val string) (string, string) {
	f := strings.Fields(val)
	switch len(f) {
	case 2:
		return f[0], f[1]
	case 1:
		i := strings.IndexFunc(f[0], func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
		if i < 0 {
			return f[0], ""
		}
		return f[0][:i], f[0][i:]
	}
	return "", ""
}

// parsePowerMW reads "475 mW" or "0.47 W" as milliwatts.
func parsePowerMW(val string) *float64 {
	num, unit := valueUnit(val)
	v, ok := parseDecimal(num)
	if !ok {
		return nil
	}
	switch unit {
	case "mW":
	case "W":
		v *= 1000
	default:
		return nil
	}
	if math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// parseMHz reads "1187 MHz".
func parseMHz(val string) *float64 {
	num, unit := valueUnit(val)
	if unit != "MHz" {
		return nil
	}
	v, ok := parseDecimal(num)
	if !ok {
		return nil
	}
	return &v
}

// parsePercent reads the first token of " 64.29% (600 MHz: 0% ...)".
func parsePercent(val string) *float64 {
	f := strings.Fields(val)
	if len(f) == 0 || !strings.HasSuffix(f[0], "%") {
		return nil
	}
	v, ok := parseDecimal(strings.TrimSuffix(f[0], "%"))
	if !ok {
		return nil
	}
	return &v
}
