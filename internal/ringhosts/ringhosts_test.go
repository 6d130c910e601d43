package ringhosts

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The original stack's cluster/hosts.json (seed 000): rank 0 is reached over
// ssh at 127.0.0.1, rank 1 over Ethernet.
const originalHostfile = `[
  {"ssh": "127.0.0.1", "ips": ["203.0.113.1"]},
  {"ssh": "203.0.113.2", "ips": ["203.0.113.2"]}
]`

func TestParseBothShapes(t *testing.T) {
	list, err := Parse([]byte(originalHostfile))
	require.NoError(t, err)
	assert.Equal(t, []Host{{SSH: "127.0.0.1", IPs: []string{"203.0.113.1"}}, {SSH: "203.0.113.2", IPs: []string{"203.0.113.2"}}}, list.Hosts)
	assert.Equal(t, "tp2", list.Topology())

	obj, err := Parse([]byte(`{"backend": "ring", "envs": ["MLX_METAL_FAST_SYNCH=1"], "hosts": ` + originalHostfile + `}`))
	require.NoError(t, err)
	assert.Equal(t, "ring", obj.Backend)
	assert.Equal(t, list.Hosts, obj.Hosts)
}

func TestParseRejects(t *testing.T) {
	for name, in := range map[string]string{
		"empty":       "  ",
		"not json":    "rank0 10.0.0.1",
		"no hosts":    "[]",
		"no ssh":      `[{"ips": ["10.0.0.1"]}]`,
		"bad ip":      `[{"ssh": "a", "ips": ["10.0.0.300"]}]`,
		"object bad":  `{"hosts": 3}`,
		"truncated":   `[{"ssh": "a"`,
		"hosts empty": `{"backend": "ring", "hosts": []}`,
	} {
		_, err := Parse([]byte(in))
		assert.Error(t, err, name)
	}
}

func TestRankByLocalAddress(t *testing.T) {
	hf, err := Parse([]byte(originalHostfile))
	require.NoError(t, err)
	local := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::ffff:203.0.113.2")}
	rank, addr, ok := hf.Rank(local)
	require.True(t, ok)
	assert.Equal(t, 1, rank, "the ssh address 127.0.0.1 is not a ring address; 203.0.113.2 is rank 1's")
	assert.Equal(t, "203.0.113.2", addr.String())
	assert.Equal(t, "rank1", NodeName(rank))

	_, _, ok = hf.Rank([]netip.Addr{netip.MustParseAddr("192.0.2.9")})
	assert.False(t, ok)
}

func TestReadNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "hosts.json")
	require.NoError(t, os.WriteFile(p, []byte("[]"), 0o600))
	_, err := Read(p)
	require.ErrorContains(t, err, p)
}

// The shipped hostfile, rendered from config/scrape/nodes.env.
func TestShippedHostfileParses(t *testing.T) {
	hf, err := Read(filepath.Join("..", "..", "config", "ring", "hosts.json"))
	require.NoError(t, err)
	assert.Len(t, hf.Hosts, 2)
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(originalHostfile))
	f.Add([]byte(`{"backend":"ring","hosts":[{"ssh":"a","ips":["::1"]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		hf, err := Parse(b)
		if err != nil {
			return
		}
		if len(hf.Hosts) == 0 {
			t.Fatal("parsed a hostfile with no hosts")
		}
		for _, h := range hf.Hosts {
			if h.SSH == "" {
				t.Fatal("parsed a host with no ssh")
			}
		}
		_ = hf.Topology()
	})
}
