// Package ringhosts reads the hostfile of an MLX ring, the file that
// `mlx.launch --hostfile` takes: which host runs which rank, and the
// addresses the ring connects to. The collector reads the same file as the
// launcher so that the hardware receiver knows its rank and ring interfaces,
// and the live stream its topology, without a second list of nodes.
//
// mlx's _distributed_utils/launch.py accepts two shapes:
//
//	[{"ssh": "host", "ips": ["10.0.0.1"]}, ...]
//	{"backend": "ring", "envs": [...], "hosts": [{"ssh": ..., "ips": [...]}, ...]}
//
// The position of a host in the list is its rank.
package ringhosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
)

// Host is one rank of the ring.
type Host struct {
	// SSH is the address mlx.launch reaches the host at.
	SSH string `json:"ssh"`
	// IPs are the host's addresses on the ring.
	IPs []string `json:"ips"`
}

// Hostfile is a parsed hostfile: Hosts[i] runs rank i.
type Hostfile struct {
	Backend string `json:"backend"`
	Hosts   []Host `json:"hosts"`
}

// Parse reads a hostfile in either of mlx.launch's shapes. Every host must
// have an ssh address; every ip must be an IP address.
func Parse(b []byte) (*Hostfile, error) {
	b = bytes.TrimSpace(b)
	var hf Hostfile
	switch {
	case len(b) == 0:
		return nil, errors.New("empty hostfile")
	case b[0] == '[':
		if err := json.Unmarshal(b, &hf.Hosts); err != nil {
			return nil, fmt.Errorf("hostfile: %w", err)
		}
	case b[0] == '{':
		if err := json.Unmarshal(b, &hf); err != nil {
			return nil, fmt.Errorf("hostfile: %w", err)
		}
	default:
		return nil, errors.New("hostfile: not a JSON list or object")
	}
	if len(hf.Hosts) == 0 {
		return nil, errors.New("hostfile: no hosts")
	}
	for i, h := range hf.Hosts {
		if h.SSH == "" {
			return nil, fmt.Errorf("hostfile: host %d (rank %d) has no ssh address", i, i)
		}
		for _, ip := range h.IPs {
			if _, err := netip.ParseAddr(ip); err != nil {
				return nil, fmt.Errorf("hostfile: host %d (%s): ips: %w", i, h.SSH, err)
			}
		}
	}
	return &hf, nil
}

// Read parses the hostfile at path.
func Read(path string) (*Hostfile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	hf, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return hf, nil
}

// Topology is the live stream's topology value for the ring: tpN, N ranks
// in tensor parallelism (mlx_lm.server's default in a ring).
func (hf *Hostfile) Topology() string { return fmt.Sprintf("tp%d", len(hf.Hosts)) }

// Rank returns the rank of the host that holds one of local as a ring
// address, and that address; ok is false when none does.
func (hf *Hostfile) Rank(local []netip.Addr) (rank int, addr netip.Addr, ok bool) {
	for i, h := range hf.Hosts {
		for _, s := range h.IPs {
			ip, err := netip.ParseAddr(s)
			if err != nil {
				continue
			}
			for _, l := range local {
				if l.Unmap() == ip.Unmap() {
					return i, ip, true
				}
			}
		}
	}
	return 0, netip.Addr{}, false
}

// NodeName is the name the scrape config gives rank i (nodes.env: rank0,
// rank1, ...).
func NodeName(rank int) string { return fmt.Sprintf("rank%d", rank) }
