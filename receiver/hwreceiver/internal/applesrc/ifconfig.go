package applesrc

import (
	"fmt"
	"regexp"
	"strings"
)

// Bridge is the output of `ifconfig bridge0`.
type Bridge struct {
	Name string // "bridge0"
	// Up is true when the flags list UP (mlx's recommended ring setup takes
	// bridge0 down and addresses each member directly).
	Up  bool
	MTU *uint64
	// Members are the interfaces of the "member: en1 flags=3<...>" lines, in
	// the order printed.
	Members []string
	// Status is the "status:" line ("active", "inactive"), "" when absent.
	Status string
}

var ifHeaderRe = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_.-]*): flags=[0-9a-fA-F]+<([^>]*)>(?:\s+mtu\s+([0-9]+))?`)

// ParseIfconfigBridge reads `ifconfig bridge0`. The output must start with
// the interface line ("bridge0: flags=8863<UP,...> mtu 1500"); when several
// interfaces are printed (`ifconfig -a`), only the first block is read.
// A bridge with no member line has no Members and is no error.
//
// Errors: ErrEmpty, ErrBinary, ErrMalformed (no interface line first).
func ParseIfconfigBridge(b []byte) (Bridge, error) {
	lines, err := textLines(b)
	if err != nil {
		return Bridge{}, fmt.Errorf("ifconfig: %w", err)
	}
	var br Bridge
	started := false
	for _, raw := range lines {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		indented := raw[0] == ' ' || raw[0] == '\t'
		if indented && !started {
			return Bridge{}, fmt.Errorf("ifconfig: %w: no \"<name>: flags=...\" line first", ErrMalformed)
		}
		if !indented {
			if started {
				break // the next interface
			}
			m := ifHeaderRe.FindStringSubmatch(raw)
			if m == nil {
				return Bridge{}, fmt.Errorf("ifconfig: %w: no \"<name>: flags=...\" line first", ErrMalformed)
			}
			started = true
			br.Name = m[1]
			for _, fl := range strings.Split(m[2], ",") {
				if fl == "UP" {
					br.Up = true
				}
			}
			if n, ok := parseUint(m[3]); ok {
				br.MTU = &n
			}
			continue
		}
		f := strings.Fields(raw)
		switch {
		case len(f) >= 2 && f[0] == "member:":
			if validIfName(f[1]) {
				br.Members = append(br.Members, f[1])
			}
		case len(f) == 2 && f[0] == "status:":
			br.Status = f[1]
		}
	}
	return br, nil
}

// validIfName accepts names such as en1, bridge0, utun10.
func validIfName(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// HardwarePort is one block of `networksetup -listallhardwareports`.
type HardwarePort struct {
	Port            string // "Thunderbolt 1"
	Device          string // "en1"
	EthernetAddress string // "36:11:22:33:44:01", "N/A", or "" when absent
}

// HardwarePorts is the parsed `networksetup -listallhardwareports`.
type HardwarePorts struct {
	// Ports in the order printed, one per device.
	Ports []HardwarePort
	// ByDevice maps a device ("en1") to its port name ("Thunderbolt 1").
	ByDevice map[string]string
}

// ParseHardwarePorts reads `networksetup -listallhardwareports`: blocks of
// "Hardware Port: X" / "Device: Y" / "Ethernet Address: Z". A block counts
// once it has both a port and a device; the first block of a device wins;
// the trailing "VLAN Configurations" section is ignored.
//
// Errors: ErrEmpty, ErrBinary, ErrNoData (no complete block).
func ParseHardwarePorts(b []byte) (HardwarePorts, error) {
	lines, err := textLines(b)
	if err != nil {
		return HardwarePorts{}, fmt.Errorf("networksetup: %w", err)
	}
	var hp HardwarePorts
	var cur *HardwarePort
	flush := func() {
		if cur == nil || cur.Port == "" || !validIfName(cur.Device) {
			return
		}
		if hp.ByDevice == nil {
			hp.ByDevice = make(map[string]string)
		}
		if _, dup := hp.ByDevice[cur.Device]; dup {
			return
		}
		hp.ByDevice[cur.Device] = cur.Port
		hp.Ports = append(hp.Ports, *cur)
	}
	for _, raw := range lines {
		key, val, ok := strings.Cut(strings.TrimSpace(raw), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "Hardware Port":
			flush()
			cur = &HardwarePort{Port: val}
		case "Device":
			if cur != nil && cur.Device == "" {
				cur.Device = val
			}
		case "Ethernet Address":
			if cur != nil && cur.EthernetAddress == "" {
				cur.EthernetAddress = val
			}
		}
	}
	flush()
	if len(hp.Ports) == 0 {
		return HardwarePorts{}, fmt.Errorf("networksetup: %w: no Hardware Port/Device block", ErrNoData)
	}
	return hp, nil
}

var thunderboltPortRe = regexp.MustCompile(`^Thunderbolt [0-9]+$`)

// IsThunderboltPort reports whether a hardware port name is a Thunderbolt
// IP port ("Thunderbolt 1"); "Thunderbolt Bridge" (the bridge itself) and
// "Thunderbolt Ethernet Slot 1" (an Ethernet adapter) are not.
func IsThunderboltPort(port string) bool { return thunderboltPortRe.MatchString(port) }

// ThunderboltInterfaces returns the interfaces that can carry the MLX ring:
// the members of the Thunderbolt bridge, then every device whose hardware
// port is "Thunderbolt N", without duplicates, in that order. With mlx's
// recommended setup (bridge0 down, one /30 per cable) ring traffic is
// counted on these enX interfaces, not on bridge0, and no IP address is
// needed to find them. Pass a zero Bridge or HardwarePorts when that
// command failed.
func ThunderboltInterfaces(bridge Bridge, ports HardwarePorts) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, m := range bridge.Members {
		add(m)
	}
	for _, p := range ports.Ports {
		if IsThunderboltPort(p.Port) {
			add(p.Device)
		}
	}
	return out
}
