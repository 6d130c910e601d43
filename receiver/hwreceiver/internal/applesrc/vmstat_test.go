package applesrc

import (
	"errors"
	"testing"
)

func TestParseVMStat(t *testing.T) {
	v, err := ParseVMStat(readTestdata(t, "vmstat.txt"))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, v.PageSize, uint64(16384))
	deepEqual(t, len(v.Counters), 22)
	deepEqual(t, v.Counters["Translation faults"], uint64(574921966))
	deepEqual(t, v.Counters["Swapouts"], uint64(929703))
	for name, tc := range map[string]struct {
		got  *uint64
		want uint64
	}{
		"free":        {v.PagesFree, 4518},
		"active":      {v.PagesActive, 194947},
		"inactive":    {v.PagesInactive, 191193},
		"speculative": {v.PagesSpeculative, 3014},
		"throttled":   {v.PagesThrottled, 0},
		"wired":       {v.PagesWiredDown, 159117},
		"purgeable":   {v.PagesPurgeable, 630},
		"stored":      {v.PagesStoredInCompressor, 1022243},
		"occupied":    {v.PagesOccupiedByCompressor, 454496},
		"file-backed": {v.FileBackedPages, 141843},
		"anonymous":   {v.AnonymousPages, 247311},
	} {
		if tc.got == nil || *tc.got != tc.want {
			t.Errorf("%s = %v, want %d", name, tc.got, tc.want)
		}
	}
	free, ok := v.FreeBytes()
	if !ok || free != 4518*16384 {
		t.Fatalf("FreeBytes = %d, %v", free, ok)
	}
	// (194947 + 191193 + 159117 + 3014 + 454496 − 630 − 141843) × 16384
	used, ok := v.UsedBytes()
	if !ok || used != 14095056896 {
		t.Fatalf("UsedBytes = %d, %v", used, ok)
	}
}

func TestParseVMStatPartial(t *testing.T) {
	// Intel page size; a line cut before its trailing dot is skipped, so
	// UsedBytes has a missing term and says so instead of under-counting.
	in := "Mach Virtual Memory Statistics: (page size of 4096 bytes)\n" +
		"Pages free:                              100000.\n" +
		"Pages active:                            500000.\n" +
		"Pages inactive:                          2000"
	v, err := ParseVMStat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	deepEqual(t, v.PageSize, uint64(4096))
	deepEqual(t, v.PagesInactive, (*uint64)(nil))
	if b, ok := v.FreeBytes(); !ok || b != 409600000 {
		t.Fatalf("FreeBytes = %d, %v", b, ok)
	}
	if _, ok := v.UsedBytes(); ok {
		t.Fatal("UsedBytes with missing counters")
	}
	// Inconsistent counters (more reclaimable than in use): no result.
	v = VMStat{PageSize: 16384, PagesActive: uptr(1), PagesInactive: uptr(1), PagesWiredDown: uptr(1), PagesSpeculative: uptr(1),
		PagesOccupiedByCompressor: uptr(1), PagesPurgeable: uptr(3), FileBackedPages: uptr(3)}
	if _, ok := v.UsedBytes(); ok {
		t.Fatal("UsedBytes below zero")
	}
	// Overflow of pages × page size.
	v = VMStat{PageSize: 1 << 40, PagesFree: uptr(1 << 30)}
	if _, ok := v.FreeBytes(); ok {
		t.Fatal("overflow accepted")
	}
}

func TestParseVMStatErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		in   string
		want error
	}{
		"empty":       {"", ErrEmpty},
		"binary":      {"Mach Virtual Memory Statistics: (page size of 16384 bytes)\x00", ErrBinary},
		"no header":   {"Pages free:                               45231.\n", ErrMalformed},
		"page size 0": {"Mach Virtual Memory Statistics: (page size of 0 bytes)\nPages free: 1.\n", ErrMalformed},
		"bad header":  {"Mach Virtual Memory Statistics: (page size of many bytes)\nPages free: 1.\n", ErrMalformed},
		"header only": {"Mach Virtual Memory Statistics: (page size of 16384 bytes)\n", ErrNoData},
		"periodic form": {"Mach Virtual Memory Statistics: (page size of 16384 bytes)\n" +
			"    free   active   specul inactive throttle    wired  prgable   faults     copy    0fill reactive   purged file-backed anonymous cmprssed cmprssor  dcomprs   comprs  pageins  pageout  swapins swapouts\n" +
			"    4518   194947     3014   191193        0   159117      630  574921966 38671927 320571840 75978152 16666917   141843   247311  1022243   454496 73011127 92304380  7854456   320741   470789   929703\n", ErrNoData},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := ParseVMStat([]byte(tc.in))
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			deepEqual(t, v, VMStat{})
		})
	}
}

func FuzzParseVMStat(f *testing.F) {
	addSeeds(f, "vmstat.txt", "Mach Virtual Memory Statistics: (page size of 18446744073709551615 bytes)\nPages free: 18446744073709551615.\nPages active: 99999999999999999999999.\n")
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseVMStat(b)
		checkResult(t, v, err)
		if err == nil {
			if v.PageSize == 0 || len(v.Counters) == 0 {
				t.Fatalf("no page size or counters without error: %+v", v)
			}
			v.FreeBytes()
			v.UsedBytes()
		}
	})
}
