package fleet

import (
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/mlx-otelcol/mlx-otelcol/internal/ringhosts"
)

// The environment variables that name this node.
const (
	NodeEnv         = "MLX_NODE_NAME"
	RingHostfileEnv = "MLX_RING_HOSTFILE"
	// DefaultRingHostfile is the hostfile config/ring.yaml and
	// config/node.yaml read when $MLX_RING_HOSTFILE is unset (relative to
	// the working directory, as they read it), so that every role of a
	// ring member names its node as the hardware receiver does.
	DefaultRingHostfile = "config/ring/hosts.json"
)

// NodeName is the node label of this process's series: configured when not
// empty, else $MLX_NODE_NAME, else this host's rank in the ring's hostfile
// ($MLX_RING_HOSTFILE, or DefaultRingHostfile when it is unset: the file
// mlx.launch and the hardware receiver read; rank0, rank1..., the names the
// scrape config and the rules use), else the host name, else "unknown".
func NodeName(configured string) string {
	if configured != "" {
		return configured
	}
	if n := strings.TrimSpace(os.Getenv(NodeEnv)); n != "" {
		return n
	}
	hostfile := os.Getenv(RingHostfileEnv)
	if hostfile == "" {
		hostfile = DefaultRingHostfile
	}
	if n := ringNodeName(hostfile); n != "" {
		return n
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "unknown"
}

// ringNodeName is rankN when one of this host's addresses is rank N's ring
// address in the hostfile at path; "" when there is no hostfile, it cannot
// be read, or no address of this host is in it (the ring link is not up).
func ringNodeName(path string) string {
	if path == "" {
		return ""
	}
	hf, err := ringhosts.Read(path)
	if err != nil {
		return ""
	}
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	var local []netip.Addr
	for _, a := range ifAddrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			local = append(local, p.Addr())
		}
	}
	if rank, _, ok := hf.Rank(local); ok {
		return ringhosts.NodeName(rank)
	}
	return ""
}
