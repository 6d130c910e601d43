//go:build unix

package hwreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two GPUs as nvidia-smi prints them for nvidiaArgs; the second does not
// report power.
const nvidiaOutput = `0, GPU-5d8f0c3e-1111-2222-3333-444455556666, NVIDIA L4, 37, 10240, 23034, 41.52, 55, 2040, 6250
1, GPU-5d8f0c3e-7777-8888-9999-000011112222, NVIDIA GeForce RTX 4090, 0, 1, 24564, [N/A], 31, 210, [Not Supported]
`

func TestParseNvidiaSMI(t *testing.T) {
	gpus, err := parseNvidiaSMI([]byte(nvidiaOutput))
	require.NoError(t, err)
	require.Len(t, gpus, 2)
	g := gpus[0]
	assert.Equal(t, "0", g.index)
	assert.Equal(t, "NVIDIA L4", g.name)
	assert.Equal(t, "GPU-5d8f0c3e-1111-2222-3333-444455556666", g.uuid)
	assert.InDelta(t, 0.37, *g.utilizationRatio, 1e-12)
	assert.Equal(t, 10240.0*(1<<20), *g.memUsedBytes)
	assert.Equal(t, 23034.0*(1<<20), *g.memTotalBytes)
	assert.Equal(t, 41.52, *g.powerWatts)
	assert.Equal(t, 55.0, *g.tempCelsius)
	assert.Equal(t, 2040e6, *g.smClockHz)
	assert.Equal(t, 6250e6, *g.memClockHz)

	assert.Nil(t, gpus[1].powerWatts, "[N/A] is absent, not 0")
	assert.Nil(t, gpus[1].memClockHz, "[Not Supported] is absent")
	assert.Equal(t, "NVIDIA GeForce RTX 4090", gpus[1].name)
}

func TestParseNvidiaSMIErrors(t *testing.T) {
	for name, in := range map[string]string{
		"empty":        "",
		"no devices":   "No devices were found\n",
		"wrong fields": "0, GPU-1, L4, 37\n",
		"no index":     ", GPU-1, L4, 1, 2, 3, 4, 5, 6, 7\n",
	} {
		_, err := parseNvidiaSMI([]byte(in))
		assert.Error(t, err, name)
	}
	for _, v := range []string{"NaN", "-1", "Inf", "1e3", "[N/A]", ""} {
		assert.Nil(t, scaled(v, 1), v)
	}
}

func TestNvidiaSourceThroughTheCommand(t *testing.T) {
	fakeCommands(t, map[string]string{"nvidia-smi": `[ "$2" = "--format=csv,noheader,nounits" ] || exit 2
cat <<'EOF'
` + nvidiaOutput + `EOF`})
	apply, err := nvidiaSource(newCommandRunner(5 * time.Second)).collect(context.Background())
	require.NoError(t, err)
	s := newSample()
	apply(s)
	assert.Len(t, s.nvidia, 2)
}

func TestNvidiaSourceWithoutNvidiaSMIDoesNotApply(t *testing.T) {
	fakeCommands(t, nil)
	_, err := nvidiaSource(newCommandRunner(5 * time.Second)).collect(context.Background())
	assert.ErrorIs(t, err, errNotApplicable)
}

func TestNvidiaSourceFailing(t *testing.T) {
	fakeCommands(t, map[string]string{"nvidia-smi": "echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.'; exit 9"})
	_, err := nvidiaSource(newCommandRunner(5 * time.Second)).collect(context.Background())
	require.Error(t, err)
	assert.NotErrorIs(t, err, errNotApplicable, "installed but broken is a failure")
}
