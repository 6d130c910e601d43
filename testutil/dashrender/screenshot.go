package dashrender

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Screenshot writes the evaluated dashboard's page (base.html) with note
// under its title, and its screenshot in headless Chromium (base.png):
// $CHROMIUM, else /usr/bin/chromium (scripts/install-chromium.sh).
func Screenshot(r Result, note, base string) error {
	page, err := HTML(r, note)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(base+".html", page, 0o644); err != nil {
		return err
	}
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	abs, err := filepath.Abs(base)
	if err != nil {
		return err
	}
	// The page's height: the lowest panel's bottom, 38 px a grid row.
	height := 40
	for _, p := range r.Panels {
		height = max(height, (p.Panel.GridPos.Y+p.Panel.GridPos.H)*38+120)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
		fmt.Sprintf("--window-size=1600,%d", height), "--screenshot="+abs+".png", "file://"+abs+".html")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("chromium: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
