package preflight

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func engine(argv ...string) Engine {
	return Engine{Component: "receivers::mlx_supervisor", Command: argv}
}

// pathWith makes PATH one directory holding an executable named name.
func pathWith(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755))
	t.Setenv("PATH", dir)
	return dir
}

func TestEngineProgramOnPath(t *testing.T) {
	dir := pathWith(t, "mlx_lm.server")
	assert.Empty(t, checkEngine(engine("mlx_lm.server", "--model", "mlx-community/Qwen3-4B-4bit")))

	t.Setenv("PATH", "/nonexistent/bin:"+dir+"/none")
	assert.Equal(t, []string{
		`receivers::mlx_supervisor: the engine "mlx_lm.server" (command[0]) is not on PATH (/nonexistent/bin:` + dir + `/none): ` +
			"install mlx-lm (pip install mlx-lm, on an Apple Silicon Mac) so that it is on PATH, or set receivers::mlx_supervisor::command " +
			"to the engine's full path (without an engine, make demo runs the simulated one)",
	}, messages(checkEngine(engine("mlx_lm.server", "--model", "mlx-community/Qwen3-4B-4bit"))))
	assert.Equal(t, []string{
		`receivers::mlx_supervisor: the engine "my-engine" (command[0]) is not on PATH (/nonexistent/bin:` + dir + `/none): ` +
			"install it, or set receivers::mlx_supervisor::command to the engine's full path (without an engine, make demo runs the simulated one)",
	}, messages(checkEngine(engine("my-engine"))))
	assert.Empty(t, checkEngine(engine("")), "an empty program is the receiver's Validate's to reject")
}

func TestEngineProgramPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "engine.sh")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, nil, 0o644))

	assert.Empty(t, checkEngine(engine(exe)))
	wd := Engine{Component: "receivers::mlx_supervisor", Command: []string{"./engine.sh"}, WorkingDir: dir}
	assert.Empty(t, checkEngine(wd), "relative to working_dir, where the engine starts")

	missing := filepath.Join(dir, "mlx_lm.server")
	assert.Equal(t, []string{
		`receivers::mlx_supervisor: the engine "` + missing + `" (command[0]) cannot be run: stat ` + missing + ": no such file or directory; " +
			"install mlx-lm (pip install mlx-lm, on an Apple Silicon Mac) so that it is on PATH, or set receivers::mlx_supervisor::command to the engine's full path (without an engine, make demo runs the simulated one)",
	}, messages(checkEngine(engine(missing))))
	assert.Equal(t, []string{`receivers::mlx_supervisor: the engine "` + plain + `" (command[0]) is not executable (mode -rw-r--r--)`}, messages(checkEngine(engine(plain))))
	assert.Equal(t, []string{`receivers::mlx_supervisor: the engine "` + dir + `" (command[0]) is a directory, not a program`}, messages(checkEngine(engine(dir))))
}

func TestEngineModelPath(t *testing.T) {
	pathWith(t, "mlx_lm.server")
	home := t.TempDir()
	t.Setenv("HOME", home)
	model := filepath.Join(home, "models", "qwen")
	require.NoError(t, os.MkdirAll(model, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(model, "config.json"), []byte("{}"), 0o644))
	file := filepath.Join(home, "model.safetensors")
	require.NoError(t, os.WriteFile(file, nil, 0o644))

	for _, ok := range []Engine{
		engine("mlx_lm.server", "--model", "mlx-community/Qwen3-4B-4bit"), // a repo id is no path
		engine("mlx_lm.server", "--model", "models/qwen"),                 // nor is this (a repo id's shape)
		engine("mlx_lm.server", "--model", model),
		engine("mlx_lm.server", "--model="+model),
		engine("mlx_lm.server", "--model", "~/models/qwen"),
		engine("mlx_lm.server", "--model", file),
		{Component: "receivers::mlx_supervisor", Command: []string{"mlx_lm.server", "--model", "./models/qwen"}, WorkingDir: home},
		{Component: "receivers::mlx_supervisor", Command: []string{"mlx_lm.server"}, Model: "~/models/qwen"},
	} {
		assert.Empty(t, checkEngine(ok), "%v %q", ok.Command, ok.Model)
	}

	missing := filepath.Join(home, "models", "none")
	assert.Equal(t, []string{
		`receivers::mlx_supervisor: the model path "` + missing + `" (--model in command) cannot be read: open ` + missing +
			": no such file or directory; give a readable model directory or file, or a Hugging Face repo id (org/name)",
	}, messages(checkEngine(engine("mlx_lm.server", "--model", missing))))
	// Each path once, and the model key too.
	errs := checkEngine(Engine{Component: "receivers::mlx_supervisor", Command: []string{"mlx_lm.server", "--model", missing}, Model: "~/none"})
	require.Len(t, errs, 2)
	assert.Contains(t, errs[1].Error(), `the model path "~/none" (model) cannot be read: open `+filepath.Join(home, "none")+": no such file or directory")
	// Below a file, which no user can read.
	under := filepath.Join(file, "x")
	assert.Equal(t, []string{
		`receivers::mlx_supervisor: the model path "` + under + `" (--model in command) cannot be read: open ` + under +
			": not a directory; give a readable model directory or file, or a Hugging Face repo id (org/name)",
	}, messages(checkEngine(engine("mlx_lm.server", "--model", under))))
}

func TestEngineModelUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every file")
	}
	pathWith(t, "mlx_lm.server")
	model := filepath.Join(t.TempDir(), "model")
	require.NoError(t, os.Mkdir(model, 0))
	errs := checkEngine(engine("mlx_lm.server", "--model", model))
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "permission denied")
}

func TestLooksLikePath(t *testing.T) {
	for s, want := range map[string]bool{
		"/Users/me/models/qwen":       true,
		"./models/qwen":               true,
		"../qwen":                     true,
		"~/models/qwen":               true,
		"mlx-community/Qwen3-4B-4bit": false,
		"Qwen3-4B":                    false,
		"~user/x":                     false,
		"":                            false,
	} {
		assert.Equal(t, want, looksLikePath(s), s)
	}
}
