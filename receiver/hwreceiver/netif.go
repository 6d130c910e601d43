package hwreceiver

import (
	"context"
	"net"
)

// netifSource reads every interface's link state from the kernel (Go's
// net.Interfaces: SIOCGIFFLAGS on macOS, netlink on Linux). A ring link is
// up when its interface is administratively up and running (IFF_RUNNING:
// the driver has a carrier; a Thunderbolt bridge whose cable is out, or a
// veth whose peer is gone, is not).
func netifSource(context.Context) (func(*sample), error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	up := make(map[string]bool, len(ifs))
	for _, i := range ifs {
		up[i.Name] = linkUp(i.Flags)
	}
	return func(s *sample) { s.linkUp = up }, nil
}

func linkUp(f net.Flags) bool { return f&net.FlagUp != 0 && f&net.FlagRunning != 0 }

// ringLinks is each ring interface's link state, 1 up or 0 down: the
// configured ones (0 when the interface is gone), else the platform's
// default set. Nothing when the link states could not be read.
func ringLinks(s *sample, configured []string) map[string]float64 {
	if s.linkUp == nil {
		return nil
	}
	want := configured
	if len(want) == 0 {
		want = s.ringDefault
	}
	out := make(map[string]float64, len(want))
	for _, n := range want {
		out[n] = 0
		if s.linkUp[n] {
			out[n] = 1
		}
	}
	return out
}
