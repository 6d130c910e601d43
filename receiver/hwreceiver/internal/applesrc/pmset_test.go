package applesrc

import (
	"errors"
	"testing"
)

func TestParsePmsetTherm(t *testing.T) {
	p, err := ParsePmsetTherm(readTestdata(t, "pmset_therm_applesilicon.txt"))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, p, PmsetTherm{Notes: []string{
		"No thermal warning level has been recorded",
		"No performance warning level has been recorded",
		"No CPU power status has been recorded",
	}})

	p, err = ParsePmsetTherm(readTestdata(t, "pmset_therm_intel.txt"))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, p, PmsetTherm{
		CPUSchedulerLimit: iptr(100),
		CPUAvailableCPUs:  iptr(8),
		CPUSpeedLimit:     iptr(72),
		Values:            map[string]int{"CPU_Scheduler_Limit": 100, "CPU_Available_CPUs": 8, "CPU_Speed_Limit": 72},
		Notes:             []string{"No thermal warning level has been recorded", "No performance warning level has been recorded"},
	})
}

func TestParsePmsetThermErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want error
	}{
		"empty":  {"", ErrEmpty},
		"binary": {"Note: x\x00", ErrBinary},
		// The original's regex expected a colon; pmset prints '='. A colon
		// line is not a value, so nothing is invented from it.
		"colon form is not pmset's": {"CPU_Scheduler_Limit: 100\n", ErrNoData},
		"garbage":                   {"pmset: unknown option\n", ErrNoData},
		"non-integer":               {"CPU_Speed_Limit = fast\n", ErrNoData},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := ParsePmsetTherm([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			deepEqual(t, p, PmsetTherm{})
		})
	}
}

func TestParseThermalPressureNotify(t *testing.T) {
	lv, err := ParseThermalPressureNotify(readTestdata(t, "notifyutil_thermalpressure.txt"))
	if err != nil || lv != ThermalNominal || lv.Fraction() != 0 {
		t.Fatalf("%v, %v", lv, err)
	}
	for in, want := range map[string]ThermalPressure{
		"com.apple.system.thermalpressurelevel 1\n":   ThermalModerate,
		"com.apple.system.thermalpressurelevel 2":     ThermalHeavy,
		"com.apple.system.thermalpressurelevel\t3\n":  ThermalTrapping,
		"  com.apple.system.thermalpressurelevel 4  ": ThermalSleeping,
	} {
		lv, err := ParseThermalPressureNotify([]byte(in))
		if err != nil || lv != want {
			t.Fatalf("%q: %v, %v", in, lv, err)
		}
	}
	for _, in := range []string{
		"", "com.apple.system.thermalpressurelevel 5", "com.apple.system.thermalpressurelevel -1",
		"com.apple.system.thermalpressurelevel", "com.apple.other 1", "com.apple.system.thermalpressurelevel 1\ncom.apple.system.thermalpressurelevel 2",
		"com.apple.system.thermalpressurelevel 18446744073709551615",
	} {
		if lv, err := ParseThermalPressureNotify([]byte(in)); err == nil || lv != 0 {
			t.Errorf("%q: %v, %v", in, lv, err)
		}
	}
	s, err := ParseNotifyutil([]byte("com.apple.system.lowpowermode 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, s, NotifyState{Name: "com.apple.system.lowpowermode", State: 1})
}

func FuzzParsePmsetTherm(f *testing.F) {
	addSeeds(f, "pmset_therm_*.txt", "CPU_Speed_Limit = 99999999999999999999\n", "= 1\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePmsetTherm(b)
		checkResult(t, p, err)
	})
}

func FuzzParseNotifyutil(f *testing.F) {
	addSeeds(f, "notifyutil_*.txt", "com.apple.system.thermalpressurelevel 256\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseNotifyutil(b)
		checkResult(t, s, err)
		lv, err := ParseThermalPressureNotify(b)
		checkResult(t, lv, err)
		if err == nil && !lv.Valid() {
			t.Fatalf("level %d", lv)
		}
	})
}
