package hwreceiver

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRingLinks(t *testing.T) {
	assert.True(t, linkUp(net.FlagUp|net.FlagRunning|net.FlagBroadcast))
	assert.False(t, linkUp(net.FlagUp), "up without a carrier")
	assert.False(t, linkUp(net.FlagRunning))

	s := &sample{linkUp: map[string]bool{"bridge0": true, "en2": false}, ringDefault: []string{"bridge0"}}
	assert.Equal(t, map[string]float64{"bridge0": 1}, ringLinks(s, nil), "the discovered ring")
	assert.Equal(t, map[string]float64{"bridge0": 1, "en2": 0, "en9": 0}, ringLinks(s, []string{"bridge0", "en2", "en9"}),
		"configured: a link without carrier, and one that is gone, are down")
	assert.Nil(t, ringLinks(&sample{}, []string{"en2"}), "no link states read: nothing said")
}

// This machine's loopback is up and running, as the kernel says.
func TestNetifSourceReadsThisMachine(t *testing.T) {
	apply, err := netifSource(context.Background())
	require.NoError(t, err)
	s := newSample()
	apply(s)
	assert.True(t, s.linkUp["lo"] || s.linkUp["lo0"], "%v", s.linkUp)
}
