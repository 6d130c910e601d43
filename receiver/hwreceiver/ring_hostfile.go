package hwreceiver

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/shirou/gopsutil/v4/net"

	"github.com/mlx-otelcol/mlx-otelcol/internal/ringhosts"
)

// localAddrs lists the addresses of this host's interfaces, by interface.
// A variable so that tests can give the addresses of another host.
var localAddrs = func(ctx context.Context) (map[string][]netip.Addr, error) {
	ifaces, err := net.InterfacesWithContext(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]netip.Addr{}
	for _, ifc := range ifaces {
		for _, a := range ifc.Addrs {
			if p, err := netip.ParsePrefix(a.Addr); err == nil {
				out[ifc.Name] = append(out[ifc.Name], p.Addr())
			} else if ip, err := netip.ParseAddr(a.Addr); err == nil {
				out[ifc.Name] = append(out[ifc.Name], ip)
			}
		}
	}
	return out, nil
}

// localRank finds this host's rank in the hostfile. ok is false when no
// interface holds a ring address (the ring link is not up yet, or the
// hostfile is another ring's).
func localRank(ctx context.Context, hf *ringhosts.Hostfile) (rank int, ok bool, err error) {
	byIface, err := localAddrs(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("listing this host's addresses: %w", err)
	}
	var all []netip.Addr
	for _, addrs := range byIface {
		all = append(all, addrs...)
	}
	rank, _, ok = hf.Rank(all)
	return rank, ok, nil
}

// errNoRingAddress: no interface of this host holds a ring address of the
// hostfile, so there is no ring interface to count.
var errNoRingAddress = errors.New("no interface holds a ring address of the hostfile")

// ringHostfileSource finds the ring interfaces at every scrape: those that
// hold one of the hostfile's ring addresses.
func ringHostfileSource(hf *ringhosts.Hostfile) collectFunc {
	return func(ctx context.Context) (func(*sample), error) {
		byIface, err := localAddrs(ctx)
		if err != nil {
			return nil, err
		}
		var ring []string
		for _, name := range sortedKeys(byIface) {
			if _, _, ok := hf.Rank(byIface[name]); ok {
				ring = append(ring, name)
			}
		}
		if len(ring) == 0 {
			return nil, errNoRingAddress
		}
		return func(s *sample) { s.ringDefault = ring }, nil
	}
}
