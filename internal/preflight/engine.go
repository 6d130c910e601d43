package preflight

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// checkEngine checks that a supervisor's engine can start: its program
// (command[0]) resolves as the supervisor's exec will resolve it, and each
// model that names a local path (--model in command, the receiver's model
// key) can be read.
func checkEngine(e Engine) []error {
	var errs []error
	if err := checkProgram(e); err != nil {
		errs = append(errs, err)
	}
	seen := map[string]bool{}
	check := func(model, where string) {
		if seen[model] || !looksLikePath(model) {
			return
		}
		seen[model] = true
		if err := readable(resolvePath(model, e.WorkingDir)); err != nil {
			errs = append(errs, fmt.Errorf("%s: the model path %q (%s) cannot be read: %w; give a readable model directory or file, or a Hugging Face repo id (org/name)", e.Component, model, where, err))
		}
	}
	for _, m := range flagValues(e.Command, "--model") {
		check(m, "--model in command")
	}
	check(e.Model, "model")
	return errs
}

// checkProgram resolves command[0] as exec.Command does: a name without a
// slash on PATH, a path as it is (relative to working_dir when that is
// set, as the engine starts there).
func checkProgram(e Engine) error {
	prog := e.Command[0]
	if prog == "" {
		return nil // the receiver's Validate says so
	}
	if !strings.Contains(prog, "/") {
		_, err := exec.LookPath(prog)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, exec.ErrNotFound):
			return fmt.Errorf("%s: the engine %q (command[0]) is not on PATH (%s): %s",
				e.Component, prog, os.Getenv("PATH"), installHint(e.Component, prog))
		default:
			return fmt.Errorf("%s: the engine %q (command[0]) cannot be run: %w", e.Component, prog, err)
		}
	}
	p := prog
	if !filepath.IsAbs(p) && e.WorkingDir != "" {
		p = filepath.Join(e.WorkingDir, p)
	}
	fi, err := os.Stat(p)
	switch {
	case err != nil:
		return fmt.Errorf("%s: the engine %q (command[0]) cannot be run: %w; %s", e.Component, prog, err, installHint(e.Component, prog))
	case fi.IsDir():
		return fmt.Errorf("%s: the engine %q (command[0]) is a directory, not a program", e.Component, prog)
	case fi.Mode()&0o111 == 0:
		return fmt.Errorf("%s: the engine %q (command[0]) is not executable (mode %s)", e.Component, prog, fi.Mode())
	}
	return nil
}

// installHint says what to do about a missing engine program.
func installHint(component, prog string) string {
	base := filepath.Base(prog)
	what := "install it"
	if strings.HasPrefix(base, "mlx_lm") || strings.HasPrefix(base, "mlx.") {
		what = "install mlx-lm (pip install mlx-lm, on an Apple Silicon Mac) so that it is on PATH"
	}
	return fmt.Sprintf("%s, or set %s::command to the engine's full path (without an engine, make demo runs the simulated one)", what, component)
}

// looksLikePath says whether a model value names a local path: absolute,
// or starting with ./, ../ or ~/. Anything else (org/name) is a Hugging
// Face repo id, which the engine downloads or finds in its cache.
func looksLikePath(s string) bool {
	return filepath.IsAbs(s) || s == "." || s == ".." || s == "~" ||
		strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || strings.HasPrefix(s, "~/")
}

// resolvePath expands ~ and makes a relative path relative to dir (the
// engine's working directory) when that is set.
func resolvePath(p, dir string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
		return p
	}
	if !filepath.IsAbs(p) && dir != "" {
		return filepath.Join(dir, p)
	}
	return p
}

// readable opens p and reads from it: a directory's first entry, a file's
// first byte.
func readable(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.IsDir() {
		if _, err := f.ReadDir(1); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		return nil
	}
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "read", Path: p, Err: errors.New("not a regular file or directory")}
	}
	if _, err := f.Read(make([]byte, 1)); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
