package applesrc

import (
	"errors"
	"testing"
)

func TestParseIOReg(t *testing.T) {
	a, err := ParseIOReg(readTestdata(t, "ioreg_agx.txt"))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, a, IOAccelerator{
		Model:                  "AGXAcceleratorG13X",
		ChipName:               "Apple M1 Pro",
		GPUCoreCount:           iptr(16),
		DeviceUtilizationPct:   fptr(36),
		RendererUtilizationPct: fptr(31),
		TilerUtilizationPct:    fptr(34),
		InUseSystemMemoryBytes: uptr(7688503296),
		AllocSystemMemoryBytes: uptr(14511046656),
	})
}

func TestParseIORegSnippets(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want IOAccelerator
	}{
		{
			name: "the reference's line, M-series Max class",
			in: "+-o AGXAcceleratorG17X  <class AGXAcceleratorG17X, id 0x100000481, registered, matched, active, busy 0 (0 ms), retain 60>\n" +
				`    "PerformanceStatistics" = {"In use system memory (driver)"=0,"Alloc system memory"=52967440384,"Tiler Utilization %"=10,"recoveryCount"=0,"Device Utilization %"=16,"In use system memory"=2363801600}` + "\n",
			want: IOAccelerator{Model: "AGXAcceleratorG17X", DeviceUtilizationPct: fptr(16), TilerUtilizationPct: fptr(10),
				InUseSystemMemoryBytes: uptr(2363801600), AllocSystemMemoryBytes: uptr(52967440384)},
		},
		{
			name: "(driver) is another key: never read as In use system memory",
			in:   `"PerformanceStatistics" = {"In use system memory (driver)"=999,"Device Utilization %"=5}` + "\n" + `"IOClass" = "AGXAcceleratorG15G"`,
			want: IOAccelerator{Model: "AGXAcceleratorG15G", DeviceUtilizationPct: fptr(5)},
		},
		{
			name: "a dictionary cut short keeps only the pairs before a comma",
			in:   `      "PerformanceStatistics" = {"Device Utilization %"=16,"Renderer Utilization %"=12,"In use system memory"=23638`,
			want: IOAccelerator{DeviceUtilizationPct: fptr(16), RendererUtilizationPct: fptr(12)},
		},
		{
			name: "nested values and spaces are skipped whole",
			in:   `"PerformanceStatistics" = { "Stats" = {"Device Utilization %"=99,"x"=(1,2)}, "Name"="a,}b" , "Renderer Utilization %" = 7 , "Alloc system memory"=<00ff> }`,
			want: IOAccelerator{RendererUtilizationPct: fptr(7)},
		},
		{
			name: "first accelerator with statistics wins; model read after the statistics",
			in: "+-o A  <class IOAccelerator, id 1>\n  |   \"model\" = \"none\"\n" +
				"+-o AGXAcceleratorG14X  <class AGXAcceleratorG14X, id 2>\n  |   \"PerformanceStatistics\" = {\"Device Utilization %\"=23}\n  |   \"model\" = <\"Apple M2 Pro\">\n  |   \"gpu-core-count\" = 19\n" +
				"+-o B  <class AGXAcceleratorG14X, id 3>\n  |   \"PerformanceStatistics\" = {\"Device Utilization %\"=90}\n",
			want: IOAccelerator{Model: "AGXAcceleratorG14X", ChipName: "Apple M2 Pro", GPUCoreCount: iptr(19), DeviceUtilizationPct: fptr(23)},
		},
		{
			name: "negative, decimal and absurd values",
			in:   `"PerformanceStatistics" = {"Device Utilization %"=-1,"Renderer Utilization %"=12.5,"Tiler Utilization %"=NaN,"In use system memory"=99999999999999999999999,"Alloc system memory"=1}`,
			want: IOAccelerator{RendererUtilizationPct: fptr(12.5), AllocSystemMemoryBytes: uptr(1)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := ParseIOReg([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			deepEqual(t, a, tc.want)
		})
	}
}

func TestParseIORegErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want error
	}{
		"empty":  {"", ErrEmpty},
		"binary": {"\x00\x00", ErrBinary},
		// The legend names every channel but holds no statistics.
		"legend only":                {`  |   "IOReportLegend" = ({"IOReportGroupName"="GPU Stats","IOReportChannels"=((1,2,"Device Utilization %"),(3,4,"In use system memory"))})` + "\n", ErrNoData},
		"key outside the dictionary": {`"Device Utilization %" = 40` + "\n", ErrNoData},
		"unknown keys only":          {`"PerformanceStatistics" = {"recoveryCount"=0,"In use system memory (driver)"=0}`, ErrNoData},
		"not a dictionary":           {`"PerformanceStatistics" = 5`, ErrNoData},
		"intel without AGX":          {"+-o IntelAccelerator  <class IntelAccelerator, id 0x1>\n", ErrNoData},
	} {
		t.Run(name, func(t *testing.T) {
			a, err := ParseIOReg([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			deepEqual(t, a, IOAccelerator{})
		})
	}
}

func FuzzParseIOReg(f *testing.F) {
	addSeeds(f, "ioreg_*.txt",
		`"PerformanceStatistics" = {"a"={{{{{{((((<<<<"}}}}"=1,"Device Utilization %"=5}`,
		`"PerformanceStatistics" = {"`,
		`"PerformanceStatistics" = {"x"`,
		`"PerformanceStatistics" = {"x"=`,
	)
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ParseIOReg(b)
		checkResult(t, a, err)
	})
}
