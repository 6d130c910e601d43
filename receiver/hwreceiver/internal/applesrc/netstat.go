package applesrc

import (
	"fmt"
	"strings"
)

// NetInterface is the "<Link#N>" row of one interface in `netstat -ib`.
// Counters are cumulative since boot; nil means the column held "-" (or
// is missing from the header).
type NetInterface struct {
	// Name without the trailing '*' netstat adds to interfaces that are down.
	Name string
	// Up is false when the name carried the '*'.
	Up  bool
	MTU *uint64
	// Link is the "<Link#N>" network column as printed.
	Link string
	// Address is the link-layer address (MAC) when the row has one, else "".
	Address string

	Ipkts, Ierrs, Ibytes *uint64
	Opkts, Oerrs, Obytes *uint64
	Coll                 *uint64
}

// Netstat is the parsed `netstat -ib` table: one entry per interface, in
// the order printed.
type Netstat struct {
	Interfaces []NetInterface
	// Skipped counts "<Link#" rows whose field count fits neither layout
	// or whose name is not an interface name.
	Skipped int
}

// Interface returns the interface with the given name (no '*').
func (n Netstat) Interface(name string) (NetInterface, bool) {
	for _, i := range n.Interfaces {
		if i.Name == name {
			return i, true
		}
	}
	return NetInterface{}, false
}

// netstatCols are the counter columns, read by their distance from the end
// of the row.
var netstatCols = []string{"Ipkts", "Ierrs", "Ibytes", "Opkts", "Oerrs", "Obytes", "Coll"}

// ParseNetstat reads `netstat -ib` (also `netstat -ib -I en0`).
//
// The header ("Name Mtu Network Address Ipkts Ierrs Ibytes Opkts Oerrs
// Obytes Coll") is required. Only the "<Link#N>" row of each interface is
// used: the per-address rows repeat the same counters with "-" in the error
// columns. A link row without an Address (lo0, gif0, utun*) has one field
// fewer than the header, so counter columns are counted from the END of
// the row, at the distance the header gives (Ibytes = f[len-5], Obytes =
// f[len-2], Ierrs = f[len-6], Oerrs = f[len-3] with the default header);
// fixed indexes such as fields[6]/fields[9] shift on those rows. A row
// with any other field count is skipped. Interfaces are de-duplicated by
// name (the first link row wins), and a trailing '*' on the name is
// stripped and recorded as Up=false. A "-" in a counter column is absent
// (nil), never 0.
//
// Errors: ErrEmpty, ErrBinary, ErrMalformed (no header), ErrNoData (header
// but no link row). The Netstat returned with an error is the zero value.
func ParseNetstat(b []byte) (Netstat, error) {
	lines, err := textLines(b)
	if err != nil {
		return Netstat{}, fmt.Errorf("netstat: %w", err)
	}
	var header []string
	var out Netstat
	seen := map[string]bool{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) >= 4 && f[0] == "Name" && f[1] == "Mtu" && f[2] == "Network" && f[3] == "Address" {
			header = f
			continue
		}
		if header == nil || len(f) < 3 || !strings.HasPrefix(f[2], "<Link#") || !strings.HasSuffix(f[2], ">") {
			continue
		}
		var addr string
		switch len(f) {
		case len(header):
			addr = f[3]
		case len(header) - 1:
		default:
			out.Skipped++
			continue
		}
		ni := NetInterface{Name: strings.TrimSuffix(f[0], "*"), Up: !strings.HasSuffix(f[0], "*"), Link: f[2], Address: addr}
		if !validIfName(ni.Name) {
			out.Skipped++
			continue
		}
		if n, ok := parseUint(f[1]); ok {
			ni.MTU = &n
		}
		dst := map[string]**uint64{
			"Ipkts": &ni.Ipkts, "Ierrs": &ni.Ierrs, "Ibytes": &ni.Ibytes,
			"Opkts": &ni.Opkts, "Oerrs": &ni.Oerrs, "Obytes": &ni.Obytes, "Coll": &ni.Coll,
		}
		for _, col := range netstatCols {
			fromEnd := columnFromEnd(header, col)
			if fromEnd == 0 || fromEnd > len(f)-3 {
				continue // not in the header, or would reach the name columns
			}
			if n, ok := parseUint(f[len(f)-fromEnd]); ok {
				*dst[col] = &n
			}
		}
		if seen[ni.Name] {
			continue
		}
		seen[ni.Name] = true
		out.Interfaces = append(out.Interfaces, ni)
	}
	if header == nil {
		return Netstat{}, fmt.Errorf("netstat: %w: no \"Name Mtu Network Address ...\" header", ErrMalformed)
	}
	if len(out.Interfaces) == 0 {
		return Netstat{}, fmt.Errorf("netstat: %w: no <Link#N> row", ErrNoData)
	}
	return out, nil
}

// columnFromEnd returns how far from the end of the header col is (1 for
// the last column), or 0 when the header has no such column. Only the
// columns after Address are considered.
func columnFromEnd(header []string, col string) int {
	for i := len(header) - 1; i >= 4; i-- {
		if header[i] == col {
			return len(header) - i
		}
	}
	return 0
}
