package applesrc

import (
	"errors"
	"testing"
	"time"
)

func TestParseSysctl(t *testing.T) {
	s, err := ParseSysctl(readTestdata(t, "sysctl.txt"))
	if err != nil {
		t.Fatal(err)
	}
	boot := time.Date(2023, 11, 14, 22, 13, 20, 123000, time.UTC)
	want := Sysctl{
		MemSizeBytes: uptr(68719476736),
		Swap: &SwapUsage{
			TotalBytes: 4096 << 20,
			UsedBytes:  1611137024, // 1536.50 MiB
			FreeBytes:  2683830272, // 2559.50 MiB
			Encrypted:  true,
		},
		BootTime:             &boot,
		MemoryPressure:       ptr(MemoryPressureWarn),
		PerfLevel0LogicalCPU: iptr(8),
		PerfLevel1LogicalCPU: iptr(2),
		CPUBrand:             "Apple M1 Max",
		IOGPUWiredLimitMB:    uptr(0),
		Values: map[string]string{
			"hw.memsize":                          "68719476736",
			"vm.swapusage":                        "total = 4096.00M  used = 1536.50M  free = 2559.50M  (encrypted)",
			"kern.boottime":                       "{ sec = 1700000000, usec = 123 } Tue Nov 14 23:13:20 2023",
			"kern.memorystatus_vm_pressure_level": "2",
			"hw.perflevel0.logicalcpu":            "8",
			"hw.perflevel1.logicalcpu":            "2",
			"machdep.cpu.brand_string":            "Apple M1 Max",
			"iogpu.wired_limit_mb":                "0",
		},
	}
	deepEqual(t, s, want)
	if s.MemoryPressure.String() != "warn" {
		t.Fatal(s.MemoryPressure.String())
	}
}

func TestParseSysctlPartial(t *testing.T) {
	// iogpu.wired_limit_mb unknown on this release (sysctl prints nothing
	// for it), a malformed hw.memsize, and the -e form.
	in := "hw.memsize: lots\nvm.swapusage=total = 0.00M  used = 0.00M  free = 0.00M  \n" +
		"sysctl: unknown oid 'iogpu.wired_limit_mb'\nkern.memorystatus_vm_pressure_level: 4\n"
	s, err := ParseSysctl([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, s.MemSizeBytes, (*uint64)(nil))
	deepEqual(t, s.Invalid, []string{"hw.memsize"})
	deepEqual(t, s.Swap, &SwapUsage{})
	deepEqual(t, s.IOGPUWiredLimitMB, (*uint64)(nil))
	deepEqual(t, s.MemoryPressure.String(), "critical")
}

func TestParseSysctlSingleValues(t *testing.T) {
	for _, in := range []string{"68719476736\n", "hw.memsize: 68719476736\n", "  68719476736  "} {
		n, err := ParseSysctlUint([]byte(in))
		if err != nil || n != 68719476736 {
			t.Fatalf("%q: %d, %v", in, n, err)
		}
	}
	sw, err := ParseSwapUsage([]byte("total = 2048.00M  used = 1209.25M  free = 838.75M  (encrypted)\n"))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, sw, SwapUsage{TotalBytes: 2048 << 20, UsedBytes: 1267990528, FreeBytes: 879493120, Encrypted: true})
	sw, err = ParseSwapUsage([]byte("vm.swapusage: total = 1.50G  used = 512.00K  free = 1.50G\n"))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, sw, SwapUsage{TotalBytes: 1610612736, UsedBytes: 524288, FreeBytes: 1610612736})

	bt, err := ParseBootTime([]byte("{ sec = 1700000000, usec = 123 } Tue Nov 14 22:13:20 2023\n"))
	if err != nil || !bt.Equal(time.Unix(1700000000, 123000)) || bt.Location() != time.UTC {
		t.Fatalf("%v, %v", bt, err)
	}
	for in, want := range map[string]string{"1\n": "normal", "2": "warn", "kern.memorystatus_vm_pressure_level: 4": "critical", "3": "unknown"} {
		m, err := ParseMemoryPressure([]byte(in))
		if err != nil || m.String() != want {
			t.Fatalf("%q: %v, %v", in, m, err)
		}
	}
}

func TestParseSysctlErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want error
	}{
		"empty":  {"", ErrEmpty},
		"binary": {"hw.memsize: 1\x00", ErrBinary},
		// -n with several names: nothing says which value is which.
		"-n form, several names": {"68719476736\ntotal = 4096.00M  used = 1536.50M  free = 2559.50M  (encrypted)\n", ErrNoData},
		"error text":             {"sysctl: unknown oid 'iogpu.wired_limit_mb'\n", ErrNoData},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := ParseSysctl([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			deepEqual(t, s, Sysctl{})
		})
	}
	for _, in := range []string{"", "1\n2\n", "-5", "1.5", "18446744073709551616"} {
		if n, err := ParseSysctlUint([]byte(in)); err == nil {
			t.Errorf("ParseSysctlUint(%q) = %d", in, n)
		}
	}
	for _, in := range []string{
		"total = 4096.00M  used = 1536.50M", // cut short
		"total = NaNM  used = 1M  free = 1M",
		"total = 1e3M  used = 1M  free = 1M",
		"total = 4096.00X  used = 1M  free = 1M",
		"total = 99999999999999999999T  used = 1M  free = 1M",
		"used = 1M  free = 1M  total",
	} {
		if sw, err := ParseSwapUsage([]byte(in)); !errors.Is(err, ErrMalformed) || sw != (SwapUsage{}) {
			t.Errorf("ParseSwapUsage(%q) = %+v, %v", in, sw, err)
		}
	}
	for _, in := range []string{
		"{ sec = 1700000000, usec = 1000000 }",
		"{ sec = -1, usec = 0 }",
		"{ sec = 1700000000 usec = 0 }",
		"{ sec = 99999999999999999, usec = 0 }",
		"sec = 1700000000, usec = 0",
		"{ sec = 1700000000, usec = 0",
	} {
		if bt, err := ParseBootTime([]byte(in)); !errors.Is(err, ErrMalformed) || !bt.IsZero() {
			t.Errorf("ParseBootTime(%q) = %v, %v", in, bt, err)
		}
	}
}

func FuzzParseSysctl(f *testing.F) {
	addSeeds(f, "sysctl.txt", "vm.swapusage: total = 1797693134862315700000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000.0T  used = 1M  free = 1M\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseSysctl(b)
		checkResult(t, s, err)
		sw, err := ParseSwapUsage(b)
		checkResult(t, sw, err)
		bt, err := ParseBootTime(b)
		checkResult(t, bt, err)
		n, err := ParseSysctlUint(b)
		checkResult(t, n, err)
		m, err := ParseMemoryPressure(b)
		checkResult(t, m, err)
	})
}
