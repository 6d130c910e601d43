package applesrc

import (
	"fmt"
	"strings"
)

// VMStat is the output of `vm_stat` (no interval argument). Counts are in
// pages; PageSize converts them to bytes. A nil pointer means the line was
// absent.
type VMStat struct {
	// PageSize in bytes, from "Mach Virtual Memory Statistics: (page size
	// of 16384 bytes)".
	PageSize uint64
	// Counters holds every "<label>: <n>." line, keyed by the label as
	// printed without its quotes: "Pages free", "Translation faults",
	// "File-backed pages", "Pageins", ...
	Counters map[string]uint64

	PagesFree                 *uint64 // "Pages free"
	PagesActive               *uint64 // "Pages active"
	PagesInactive             *uint64 // "Pages inactive"
	PagesSpeculative          *uint64 // "Pages speculative"
	PagesThrottled            *uint64 // "Pages throttled"
	PagesWiredDown            *uint64 // "Pages wired down"
	PagesPurgeable            *uint64 // "Pages purgeable"
	PagesStoredInCompressor   *uint64 // "Pages stored in compressor" (logical pages compressed)
	PagesOccupiedByCompressor *uint64 // "Pages occupied by compressor" (physical pages the compressor holds)
	FileBackedPages           *uint64 // "File-backed pages" (external pages)
	AnonymousPages            *uint64 // "Anonymous pages" (internal pages)
}

const vmStatHeader = "Mach Virtual Memory Statistics:"

// ParseVMStat reads `vm_stat`.
//
// The page-size header is required: without it no count can be turned into
// bytes. Each counter line is "<label>: <digits>." and the trailing dot
// vm_stat always prints is required too, so a line cut short is skipped
// rather than read as a smaller count. The periodic form (`vm_stat 1`, a
// table) is not read and gives ErrNoData.
//
// Errors: ErrEmpty, ErrBinary, ErrMalformed (header missing or page size 0),
// ErrNoData (header but no counter). The VMStat returned with an error is
// the zero value.
func ParseVMStat(b []byte) (VMStat, error) {
	lines, err := textLines(b)
	if err != nil {
		return VMStat{}, fmt.Errorf("vm_stat: %w", err)
	}
	var v VMStat
	for _, raw := range lines {
		l := strings.TrimSpace(raw)
		if strings.HasPrefix(l, vmStatHeader) {
			ps, ok := parseVMStatPageSize(strings.TrimPrefix(l, vmStatHeader))
			if !ok {
				return VMStat{}, fmt.Errorf("vm_stat: %w: unreadable page size in %q", ErrMalformed, l)
			}
			v.PageSize = ps
			continue
		}
		i := strings.LastIndexByte(l, ':')
		if i <= 0 {
			continue
		}
		label := strings.Trim(strings.TrimSpace(l[:i]), `"`)
		val := strings.TrimSpace(l[i+1:])
		if label == "" || !strings.HasSuffix(val, ".") {
			continue
		}
		n, ok := parseUint(strings.TrimSuffix(val, "."))
		if !ok {
			continue
		}
		if v.Counters == nil {
			v.Counters = make(map[string]uint64)
		}
		v.Counters[label] = n
	}
	if v.PageSize == 0 {
		return VMStat{}, fmt.Errorf("vm_stat: %w: no %q header", ErrMalformed, vmStatHeader+" (page size of N bytes)")
	}
	if len(v.Counters) == 0 {
		return VMStat{}, fmt.Errorf("vm_stat: %w", ErrNoData)
	}
	for label, dst := range map[string]**uint64{
		"Pages free":                   &v.PagesFree,
		"Pages active":                 &v.PagesActive,
		"Pages inactive":               &v.PagesInactive,
		"Pages speculative":            &v.PagesSpeculative,
		"Pages throttled":              &v.PagesThrottled,
		"Pages wired down":             &v.PagesWiredDown,
		"Pages purgeable":              &v.PagesPurgeable,
		"Pages stored in compressor":   &v.PagesStoredInCompressor,
		"Pages occupied by compressor": &v.PagesOccupiedByCompressor,
		"File-backed pages":            &v.FileBackedPages,
		"Anonymous pages":              &v.AnonymousPages,
	} {
		if n, ok := v.Counters[label]; ok {
			*dst = ptr(n)
		}
	}
	return v, nil
}

// parseVMStatPageSize reads " (page size of 16384 bytes)".
func parseVMStatPageSize(s string) (uint64, bool) {
	f := strings.Fields(strings.Trim(strings.TrimSpace(s), "()"))
	if len(f) != 5 || f[0] != "page" || f[1] != "size" || f[2] != "of" || f[4] != "bytes" {
		return 0, false
	}
	n, ok := parseUint(f[3])
	return n, ok && n > 0
}

// Bytes converts a page count to bytes; false on overflow.
func (v VMStat) Bytes(pages uint64) (uint64, bool) {
	return mulBytes(pages, v.PageSize)
}

// FreeBytes is "Pages free" × page size: memory on the free list only.
// Speculative and inactive pages, which macOS also hands out quickly, are
// not counted. False when the line is absent.
func (v VMStat) FreeBytes() (uint64, bool) {
	if v.PagesFree == nil {
		return 0, false
	}
	return v.Bytes(*v.PagesFree)
}

// UsedBytes computes used memory the way macmon does from
// host_statistics64(HOST_VM_INFO64):
//
//	(active + inactive + wired + speculative + occupied by compressor
//	 − purgeable − file-backed) × page size
//
// i.e. every page in use, less what the kernel can drop at once without
// writing anything out (purgeable pages and file-backed cache). vm_stat's
// labels map to those counters: "Pages active", "Pages inactive", "Pages
// wired down", "Pages speculative", "Pages occupied by compressor", "Pages
// purgeable", "File-backed pages" (external_page_count).
//
// False when one of the seven lines is absent, or when the subtraction
// would go below zero (counters from different moments).
func (v VMStat) UsedBytes() (uint64, bool) {
	add := []*uint64{v.PagesActive, v.PagesInactive, v.PagesWiredDown, v.PagesSpeculative, v.PagesOccupiedByCompressor}
	sub := []*uint64{v.PagesPurgeable, v.FileBackedPages}
	var in, out uint64
	for _, p := range add {
		if p == nil || in+*p < in {
			return 0, false
		}
		in += *p
	}
	for _, p := range sub {
		if p == nil || out+*p < out {
			return 0, false
		}
		out += *p
	}
	if out > in {
		return 0, false
	}
	return v.Bytes(in - out)
}
