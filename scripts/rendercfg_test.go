package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mlx-otelcol/mlx-otelcol/internal/ringhosts"
)

// Rank 0 of the rendered hostfile is this host as mlx.launch runs it
// locally, 127.0.0.1, whatever address the scrape config reaches it at:
// started over ssh, its engine would be sshd's child, outside the engine's
// process group that the supervisor's no-orphan cleanup ends.
func TestRankZeroIsLaunchedLocally(t *testing.T) {
	out := t.TempDir()
	cmd := exec.Command("bash", "render-config.sh", "-o", out)
	cmd.Env = append(os.Environ(), "RANK0_ADDR=mlx-rank0.example", "RANK1_ADDR=mlx-rank1.example")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("render-config.sh: %v\n%s", err, b)
	}
	for _, path := range []string{filepath.Join(out, "hosts.json"), filepath.Join("..", "config", "ring", "hosts.json")} {
		hf, err := ringhosts.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(hf.Hosts) != 2 || hf.Hosts[0].SSH != "127.0.0.1" || hf.Hosts[1].SSH == "127.0.0.1" {
			t.Errorf("%s: %+v; want rank 0 at 127.0.0.1, rank 1 by its address", path, hf.Hosts)
		}
	}
}
