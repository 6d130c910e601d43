package applesrc

// ThermalPressure is macOS's thermal pressure level, the OSThermalPressureLevel
// scale shared by powermetrics' thermal sampler ("Current pressure level:
// Nominal") and the com.apple.system.thermalpressurelevel notification:
//
//	level  name      Fraction()
//	0      Nominal   0.00
//	1      Moderate  0.25
//	2      Heavy     0.50
//	3      Trapping  0.75
//	4      Sleeping  1.00
//
// Fraction is level/4, so 0 means no pressure and 1 the worst state.
type ThermalPressure int

// The five thermal pressure levels.
const (
	ThermalNominal  ThermalPressure = 0
	ThermalModerate ThermalPressure = 1
	ThermalHeavy    ThermalPressure = 2
	ThermalTrapping ThermalPressure = 3
	ThermalSleeping ThermalPressure = 4
)

var thermalNames = [...]string{"Nominal", "Moderate", "Heavy", "Trapping", "Sleeping"}

// Valid reports whether t is one of the five levels.
func (t ThermalPressure) Valid() bool { return t >= ThermalNominal && t <= ThermalSleeping }

// String returns the name powermetrics prints ("Nominal" ... "Sleeping"),
// or "unknown" for a value outside 0..4.
func (t ThermalPressure) String() string {
	if !t.Valid() {
		return "unknown"
	}
	return thermalNames[t]
}

// Level returns the level as an int, 0..4.
func (t ThermalPressure) Level() int { return int(t) }

// Fraction maps the level onto 0..1 (level/4). A value outside 0..4 gives 0.
func (t ThermalPressure) Fraction() float64 {
	if !t.Valid() {
		return 0
	}
	return float64(t) / 4
}

// ThermalPressureFromName reads a level name as powermetrics prints it
// (exact, case-sensitive: "Nominal", "Moderate", "Heavy", "Trapping",
// "Sleeping").
func ThermalPressureFromName(s string) (ThermalPressure, bool) {
	for i, n := range thermalNames {
		if s == n {
			return ThermalPressure(i), true
		}
	}
	return 0, false
}
