package perf

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// PprofURL is config/profile.yaml's pprof endpoint.
const PprofURL = "http://127.0.0.1:1777/debug/pprof/"

// saveCPUProfile records the collector's CPU for the cell's run (less a
// little at each end: the profile starts as the load does).
func saveCPUProfile(dir, prefix string, cell Cell, d time.Duration) error {
	secs := max(1, int(d.Seconds())-1)
	return fetchProfile(fmt.Sprintf("%sprofile?seconds=%d", PprofURL, secs), filepath.Join(dir, prefix+"cpu-"+cellFile(cell)+".pprof"))
}

// saveAllocs saves the allocation profile (every allocation since start:
// read it with -sample_index=alloc_space and compare two of them with
// -diff_base).
func saveAllocs(dir, prefix string, cell Cell) error {
	return fetchProfile(PprofURL+"allocs", filepath.Join(dir, prefix+"allocs-"+cellFile(cell)+".pprof"))
}

func cellFile(c Cell) string { return strings.NewReplacer(" ", "-", "=", "").Replace(c.String()) }

func fetchProfile(url, path string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", url, resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
