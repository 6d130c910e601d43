package hwreceiver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Captured from a Linux 6.1 host at rest, and under memory pressure.
const (
	psiIdle     = "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	psiStalling = "some avg10=31.42 avg60=12.07 avg300=3.10 total=48127366\nfull avg10=18.90 avg60=6.51 avg300=1.44 total=27100452\n"
	psiWaiting  = "some avg10=12.50 avg60=4.00 avg300=1.00 total=1200000\nfull avg10=2.00 avg60=0.50 avg300=0.10 total=200000\n"
)

func TestPSIAsTheMacOSLevel(t *testing.T) {
	for in, want := range map[string]float64{psiIdle: 1, psiWaiting: 2, psiStalling: 4} {
		some, full, err := parsePSI([]byte(in))
		require.NoError(t, err)
		assert.Equal(t, want, psiLevel(some, full), in)
	}
	for _, bad := range []string{"", "full avg10=1.00\n", "some avg10=x\n", "some total=1\n", "some avg10=101.0\n"} {
		_, _, err := parsePSI([]byte(bad))
		assert.Error(t, err, "%q", bad)
	}
}

func FuzzParsePSI(f *testing.F) {
	for _, s := range []string{psiIdle, psiStalling, psiWaiting} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		some, full, err := parsePSI(b)
		if err == nil && (some < 0 || some > 100 || full < 0 || full > 100) {
			t.Fatalf("%q: avg10 %v %v out of 0-100", b, some, full)
		}
	})
}
