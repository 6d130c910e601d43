package applesrc

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func mustTime(t *testing.T, layout, s string) *time.Time {
	t.Helper()
	tm, err := time.Parse(layout, s)
	if err != nil {
		t.Fatal(err)
	}
	return &tm
}

func durPtr(d time.Duration) *time.Duration { return &d }

func thermPtr(p ThermalPressure) *ThermalPressure { return &p }

const pmLayout = "2006-01-02 15:04:05 -0700"

func TestParsePowermetricsM1TakesLastSample(t *testing.T) {
	got, err := ParsePowermetrics(readTestdata(t, "powermetrics_m1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := Powermetrics{
		MachineModel:          "MacBookAir10,1",
		OSVersion:             "23F79",
		SampleTime:            mustTime(t, pmLayout, "2024-06-10 09:30:02 +0200"),
		Elapsed:               durPtr(1000870 * time.Microsecond),
		Samples:               2,
		CPUPowerMW:            fptr(475),
		GPUPowerMW:            fptr(47), // the power block's, not the GPU section's 190
		ANEPowerMW:            fptr(0),
		CombinedPowerMW:       fptr(522),
		GPUActiveFreqMHz:      fptr(618),
		GPUActiveResidencyPct: fptr(25),
		GPUIdleResidencyPct:   fptr(75),
		Clusters: []Cluster{
			{Name: "E-Cluster", Kind: "E", ActiveFreqMHz: fptr(1187), ActiveResidencyPct: fptr(64.29), IdleResidencyPct: fptr(35.71)},
			{Name: "P-Cluster", Kind: "P", ActiveFreqMHz: fptr(1172), ActiveResidencyPct: fptr(12.5), IdleResidencyPct: fptr(87.5)},
		},
		ThermalPressure: thermPtr(ThermalNominal),
	}
	if !got.SampleTime.Equal(*want.SampleTime) {
		t.Fatalf("time %v, want %v", got.SampleTime, want.SampleTime)
	}
	got.SampleTime = want.SampleTime
	deepEqual(t, got, want)
}

func TestParsePowermetricsMaxClusters(t *testing.T) {
	got, err := ParsePowermetrics(readTestdata(t, "powermetrics_m4max.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := Powermetrics{
		MachineModel:          "Mac16,6",
		OSVersion:             "25D125",
		SampleTime:            mustTime(t, pmLayout, "2026-04-04 13:20:22 -0400"),
		Elapsed:               durPtr(516350 * time.Microsecond),
		Samples:               1,
		CPUPowerMW:            fptr(41),
		GPUPowerMW:            fptr(2),
		ANEPowerMW:            fptr(0),
		CombinedPowerMW:       fptr(43),
		GPUActiveFreqMHz:      fptr(338),
		GPUActiveResidencyPct: fptr(1.21),
		GPUIdleResidencyPct:   fptr(98.79),
		Clusters: []Cluster{
			{Name: "E-Cluster", Kind: "E", OnlinePct: fptr(100), ActiveFreqMHz: fptr(1208), ActiveResidencyPct: fptr(20.4), IdleResidencyPct: fptr(79.6), DownResidencyPct: fptr(0)},
			{Name: "P0-Cluster", Kind: "P", OnlinePct: fptr(0), ActiveFreqMHz: fptr(0), ActiveResidencyPct: fptr(0), IdleResidencyPct: fptr(0), DownResidencyPct: fptr(100)},
			{Name: "P1-Cluster", Kind: "P", ActiveFreqMHz: fptr(2806), ActiveResidencyPct: fptr(5.57), IdleResidencyPct: fptr(39.98), DownResidencyPct: fptr(54.45)},
		},
		ThermalPressure: thermPtr(ThermalModerate),
	}
	got.SampleTime = checkTime(t, got.SampleTime, want.SampleTime)
	deepEqual(t, got, want)
	if c, ok := got.Cluster("P1-Cluster"); !ok || *c.ActiveFreqMHz != 2806 {
		t.Fatalf("Cluster(P1-Cluster) = %+v, %v", c, ok)
	}
	if _, ok := got.Cluster("P2-Cluster"); ok {
		t.Fatal("P2-Cluster found")
	}
}

func checkTime(t *testing.T, got, want *time.Time) *time.Time {
	t.Helper()
	if got == nil || !got.Equal(*want) {
		t.Fatalf("time %v, want %v", got, want)
	}
	return want
}

// The second sample of the Ultra capture stops after the power block (no
// GPU section, no thermal line): the first, complete one is returned.
func TestParsePowermetricsUltraCutFallsBack(t *testing.T) {
	got, err := ParsePowermetrics(readTestdata(t, "powermetrics_m1ultra_cut.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Samples != 2 {
		t.Fatalf("Samples = %d", got.Samples)
	}
	got.SampleTime = checkTime(t, got.SampleTime, mustTime(t, pmLayout, "2023-10-03 11:42:07 +0000"))
	deepEqual(t, got.CombinedPowerMW, fptr(91180))
	deepEqual(t, got.GPUPowerMW, fptr(51230))
	deepEqual(t, got.ANEPowerMW, fptr(1210))
	deepEqual(t, got.GPUActiveResidencyPct, fptr(96.41))
	deepEqual(t, got.ThermalPressure, thermPtr(ThermalHeavy))
	var names []string
	for _, c := range got.Clusters {
		names = append(names, c.Kind+":"+c.Name)
	}
	deepEqual(t, strings.Join(names, " "), "E:E0-Cluster E:E1-Cluster P:P0-Cluster P:P1-Cluster P:P2-Cluster P:P3-Cluster")
	deepEqual(t, got.Clusters[2], Cluster{Name: "P0-Cluster", Kind: "P", ActiveFreqMHz: fptr(3228), ActiveResidencyPct: fptr(99.02), IdleResidencyPct: fptr(0.98)})
}

func TestParsePowermetricsSnippets(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, p Powermetrics)
	}{
		{
			// The reference's lines with no section headers: the second
			// "GPU Power" follows the GPU lines, so it is the GPU section's.
			name: "GPU Power twice without section headers",
			in: "CPU Power: 475 mW\nGPU Power: 47 mW\nANE Power: 0 mW\nCombined Power (CPU + GPU + ANE): 522 mW\n" +
				"GPU HW active frequency: 618 MHz\nGPU HW active residency:  25.00% (338 MHz: 1% ...)\nGPU idle residency:  75.00%\nGPU Power: 190 mW\n",
			check: func(t *testing.T, p Powermetrics) {
				deepEqual(t, p.GPUPowerMW, fptr(47))
				deepEqual(t, p.Samples, 0)
			},
		},
		{
			name: "gpu_power sampler alone: the GPU section's value is used",
			in:   "*** Sampled system activity (Fri Nov 15 10:00:00 2024 -0800) (1000ms elapsed) ***\n\n**** GPU usage ****\n\nGPU HW active frequency: 618 MHz\nGPU Power: 190 mW\n",
			check: func(t *testing.T, p Powermetrics) {
				deepEqual(t, p.GPUPowerMW, fptr(190))
				deepEqual(t, p.Elapsed, durPtr(time.Second))
				deepEqual(t, p.CPUPowerMW, (*float64)(nil))
			},
		},
		{
			name: "watts are converted to milliwatts",
			in:   "CPU Power: 1.5 W\nANE Power: 0.25W\nGPU Power: 120mW\n",
			check: func(t *testing.T, p Powermetrics) {
				deepEqual(t, p.CPUPowerMW, fptr(1500))
				deepEqual(t, p.ANEPowerMW, fptr(250))
				deepEqual(t, p.GPUPowerMW, fptr(120))
			},
		},
		{
			name: "lines cut mid-value are ignored, not read short",
			in:   "CPU Power: 823 mW\nCombined Power (CPU + GPU + ANE): 117\nE-Cluster HW active frequency: 12\nE-Cluster HW active residency:  77.4\nCurrent pressure level: Nomin",
			check: func(t *testing.T, p Powermetrics) {
				deepEqual(t, p.CPUPowerMW, fptr(823))
				deepEqual(t, p.CombinedPowerMW, (*float64)(nil))
				deepEqual(t, p.Clusters, []Cluster(nil))
				deepEqual(t, p.ThermalPressure, (*ThermalPressure)(nil))
			},
		},
		{
			name: "refuses NaN, Inf, signs and exponents",
			in:   "CPU Power: NaN mW\nGPU Power: Inf mW\nANE Power: -3 mW\nDRAM Power: 1e3 mW\nPackage Power: 0x10 mW\nCombined Power (CPU + GPU + ANE): 7 mW\n",
			check: func(t *testing.T, p Powermetrics) {
				deepEqual(t, p.CombinedPowerMW, fptr(7))
				for _, v := range []*float64{p.CPUPowerMW, p.GPUPowerMW, p.ANEPowerMW, p.DRAMPowerMW, p.PackagePowerMW} {
					if v != nil {
						t.Fatalf("read %v", *v)
					}
				}
			},
		},
		{
			name: "older macOS: Package and DRAM power",
			in:   "E-Cluster Power: 12 mW\nP-Cluster Power: 40 mW\nDRAM Power: 11 mW\nCPU Power: 52 mW\nGPU Power: 6 mW\nPackage Power: 89 mW\n",
			check: func(t *testing.T, p Powermetrics) {
				deepEqual(t, p.PackagePowerMW, fptr(89))
				deepEqual(t, p.DRAMPowerMW, fptr(11))
				deepEqual(t, p.Clusters, []Cluster{{Name: "E-Cluster", Kind: "E", PowerMW: fptr(12)}, {Name: "P-Cluster", Kind: "P", PowerMW: fptr(40)}})
			},
		},
		{
			name: "last sample is only a header: the one before is used",
			in:   "*** Sampled system activity (Fri Nov 15 10:00:00 2024 -0800) (1000.00ms elapsed) ***\nCPU Power: 10 mW\n*** Sampled system activity (Fri Nov 15 10:00:01 2024 -0800) (1000.00ms elapsed) ***\n",
			check: func(t *testing.T, p Powermetrics) {
				deepEqual(t, p.CPUPowerMW, fptr(10))
				deepEqual(t, p.Samples, 2)
				deepEqual(t, p.SampleTime.Second(), 0)
			},
		},
		{
			name: "a later sample with more lines is taken",
			in:   "*** Sampled system activity (x) (y) ***\nCPU Power: 10 mW\n*** Sampled system activity (x) (y) ***\nCPU Power: 20 mW\nGPU Power: 1 mW\n",
			check: func(t *testing.T, p Powermetrics) {
				deepEqual(t, p.CPUPowerMW, fptr(20))
				deepEqual(t, p.SampleTime, (*time.Time)(nil))
				deepEqual(t, p.Elapsed, (*time.Duration)(nil))
			},
		},
		{
			name: "super cores on newer parts",
			in:   "S-Cluster HW active frequency: 2416 MHz\nS0-Cluster HW active residency:  40.13% (338 MHz:  40%)\n",
			check: func(t *testing.T, p Powermetrics) {
				deepEqual(t, p.Clusters, []Cluster{{Name: "S-Cluster", Kind: "S", ActiveFreqMHz: fptr(2416)}, {Name: "S0-Cluster", Kind: "S", ActiveResidencyPct: fptr(40.13)}})
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePowermetrics([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, p)
		})
	}
}

func TestParsePowermetricsErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want error
	}{
		"empty":          {"", ErrEmpty},
		"blank":          {" \n\t\n", ErrEmpty},
		"binary":         {"CPU Power: 4 mW\x00\x01", ErrBinary},
		"garbage":        {"powermetrics must be invoked as the superuser\n", ErrNoData},
		"header only":    {"*** Sampled system activity (Fri Nov 15 10:00:00 2024 -0800) (1000ms elapsed) ***\n", ErrNoData},
		"preamble only":  {"Machine model: Mac14,2\nOS version: 25C56\n", ErrNoData},
		"cut mid-number": {"CPU Power: 82", ErrNoData},
		"smc sampler (Intel only, the original's NaN source)": {"CPU die temperature: 47.12 C\n", ErrNoData},
	} {
		t.Run(name, func(t *testing.T) {
			p, err := ParsePowermetrics([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			deepEqual(t, p, Powermetrics{})
		})
	}
}

func TestThermalPressureMapping(t *testing.T) {
	for _, tc := range []struct {
		name  string
		level int
		frac  float64
	}{
		{"Nominal", 0, 0}, {"Moderate", 1, 0.25}, {"Heavy", 2, 0.5}, {"Trapping", 3, 0.75}, {"Sleeping", 4, 1},
	} {
		p, err := ParsePowermetrics([]byte("Current pressure level: " + tc.name + "\n"))
		if err != nil {
			t.Fatal(err)
		}
		lv := *p.ThermalPressure
		if lv.Level() != tc.level || lv.Fraction() != tc.frac || lv.String() != tc.name {
			t.Fatalf("%s: level %d fraction %v name %s", tc.name, lv.Level(), lv.Fraction(), lv)
		}
	}
	if _, ok := ThermalPressureFromName("nominal"); ok {
		t.Fatal("names are case-sensitive as powermetrics prints them")
	}
	if ThermalPressure(9).String() != "unknown" || ThermalPressure(9).Fraction() != 0 || ThermalPressure(-1).Valid() {
		t.Fatal("out-of-range level")
	}
}

func FuzzParsePowermetrics(f *testing.F) {
	addSeeds(f, "powermetrics_*.txt",
		"CPU Power: 1e308 W\nGPU Power: 179769313486231570000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000.0 W\n",
		"*** Sampled system activity (Fri Nov 15 10:00:00 2024 -0800) (99999999999999999999999ms elapsed) ***\nCPU Power: 1 mW\n",
		"X-Cluster Online: 5%\n-Cluster Power: 3 mW\n",
	)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePowermetrics(b)
		checkResult(t, p, err)
		if err == nil && p.ThermalPressure != nil && !p.ThermalPressure.Valid() {
			t.Fatalf("thermal level %d", *p.ThermalPressure)
		}
		if p.Elapsed != nil && *p.Elapsed < 0 {
			t.Fatalf("negative elapsed %v", *p.Elapsed)
		}
	})
}
