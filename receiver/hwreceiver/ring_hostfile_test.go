package hwreceiver

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.uber.org/zap"

	"github.com/mlx-otelcol/mlx-otelcol/internal/fleet"
	"github.com/mlx-otelcol/mlx-otelcol/testutil/metrictest"
)

// The original's two-Mac ring: rank 1 holds 203.0.113.2 on en0.
const twoRanks = `[{"ssh": "127.0.0.1", "ips": ["203.0.113.1"]}, {"ssh": "203.0.113.2", "ips": ["203.0.113.2"]}]`

func withLocalAddrs(t *testing.T, byIface map[string][]string) {
	t.Helper()
	orig := localAddrs
	t.Cleanup(func() { localAddrs = orig })
	localAddrs = func(context.Context) (map[string][]netip.Addr, error) {
		out := map[string][]netip.Addr{}
		for name, addrs := range byIface {
			for _, a := range addrs {
				out[name] = append(out[name], netip.MustParseAddr(a))
			}
		}
		return out, nil
	}
}

func hostfile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hosts.json")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

// A ring member with the hostfile: named by its rank, and mlx_net_* counts
// the interface that holds its ring address, not every interface.
func TestRingHostfileNamesTheNodeAndFindsTheRingInterface(t *testing.T) {
	withLocalAddrs(t, map[string][]string{"lo0": {"127.0.0.1"}, "en0": {"203.0.113.2"}, "en1": {"192.168.1.20"}})
	cfg := testConfig()
	cfg.Node = ""
	cfg.RingHostfile = hostfile(t, twoRanks)
	netdev := netdevLike("lo0", "en0", "en1")
	h := newHWScraperWith(cfg, zap.NewNop(), newProcMatcher(cfg, 1), []*source{netdev}, nil)
	require.NoError(t, h.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = h.shutdown(context.Background()) })

	md, err := h.scrape(context.Background())
	require.NoError(t, err)
	p := points(t, md, "rank1")
	assert.Equal(t, 1.0, p["mlx_hw_source_up{source=ring_hostfile}"])
	assert.Equal(t, 1.0, p["mlx_net_rx_bytes_total{iface=en0}"])
	assert.NotContains(t, p, "mlx_net_rx_bytes_total{iface=en1}", "en1 holds no ring address")
}

// A configured node and ring_interfaces win over the hostfile's.
func TestRingHostfileKeepsWhatIsConfigured(t *testing.T) {
	withLocalAddrs(t, map[string][]string{"en0": {"203.0.113.2"}})
	cfg := testConfig()
	cfg.RingHostfile = hostfile(t, twoRanks)
	cfg.RingInterfaces = []string{"en5"}
	h := newHWScraperWith(cfg, zap.NewNop(), newProcMatcher(cfg, 1), nil, nil)
	require.NoError(t, h.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = h.shutdown(context.Background()) })
	md, err := h.scrape(context.Background())
	require.NoError(t, err)
	p := points(t, md, "test-node")
	assert.NotContains(t, p, "mlx_hw_source_up{source=ring_hostfile}")
}

// $MLX_NODE_NAME wins over the hostfile's rank, as it does for the
// collector's other roles (fleet.NodeName): one collector, one node name.
func TestRingHostfileYieldsToMLXNodeName(t *testing.T) {
	t.Setenv(fleet.NodeEnv, "studio-7")
	withLocalAddrs(t, map[string][]string{"en0": {"203.0.113.2"}})
	cfg := testConfig()
	cfg.Node = ""
	cfg.RingHostfile = hostfile(t, twoRanks)
	h := newHWScraperWith(cfg, zap.NewNop(), newProcMatcher(cfg, 1), nil, nil)
	require.NoError(t, h.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = h.shutdown(context.Background()) })
	md, err := h.scrape(context.Background())
	require.NoError(t, err)
	p := points(t, md, "studio-7")
	assert.Equal(t, 1.0, p["mlx_hw_source_up{source=ring_hostfile}"])
}

// netdevLike reports every interface, with the platform's default ring:
// all of them, as Linux's netdev source does.
func netdevLike(ifaces ...string) *source {
	return &source{name: "netdev", collect: func(context.Context) (func(*sample), error) {
		return func(s *sample) {
			for _, n := range ifaces {
				s.net = append(s.net, netCounters{iface: n, rxBytes: fp(1), txBytes: fp(2)})
			}
			s.ringDefault = ifaces
		}, nil
	}}
}

// The ring link not up yet: the node keeps its name, the source says why,
// and no interface is counted as the ring (not every one).
func TestRingHostfileWithoutRingAddress(t *testing.T) {
	withLocalAddrs(t, map[string][]string{"en0": {"192.168.1.20"}})
	cfg := testConfig()
	cfg.RingHostfile = hostfile(t, twoRanks)
	h := newHWScraperWith(cfg, zap.NewNop(), newProcMatcher(cfg, 1), []*source{netdevLike("en0", "en1")}, nil)
	require.NoError(t, h.start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = h.shutdown(context.Background()) })
	md, err := h.scrape(context.Background())
	require.NoError(t, err)
	p := points(t, md, "test-node")
	assert.Equal(t, 0.0, metrictest.Value(t, p, "mlx_hw_source_up{source=ring_hostfile}"))
	assert.NotContains(t, p, "mlx_net_rx_bytes_total{iface=en0}")
	assert.NotContains(t, p, "mlx_net_rx_bytes_total{iface=en1}")
}

// A missing or malformed hostfile stops the start: a configuration error.
func TestRingHostfileErrorsStopTheStart(t *testing.T) {
	for name, path := range map[string]string{
		"missing":   filepath.Join(t.TempDir(), "nope.json"),
		"malformed": hostfile(t, `[{"ips": ["10.0.0.1"]}]`),
	} {
		cfg := testConfig()
		cfg.RingHostfile = path
		h := newHWScraperWith(cfg, zap.NewNop(), newProcMatcher(cfg, 1), nil, nil)
		err := h.start(context.Background(), componenttest.NewNopHost())
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "ring_hostfile", name)
	}
}
