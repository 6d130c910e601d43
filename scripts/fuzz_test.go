package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fuzzWithStubGo runs `fuzz.sh FuzzX ./proxy` with GO set to a stub that
// prints outputs[i] and exits with its code on its i-th call, and returns
// the script's output, how many times go test ran and its exit error.
func fuzzWithStubGo(t *testing.T, outputs ...string) (string, int, error) {
	t.Helper()
	dir := t.TempDir()
	var body strings.Builder
	body.WriteString("n=$(cat " + dir + "/calls 2>/dev/null || echo 0); n=$((n+1)); echo $n >" + dir + "/calls\n")
	for i, out := range outputs {
		code := "0"
		if strings.Contains(out, "FAIL") {
			code = "1"
		}
		body.WriteString("[ $n -eq " + strconv.Itoa(i+1) + " ] && { printf '%s\\n' '" + out + "'; exit " + code + "; }\n")
	}
	body.WriteString("exit 2\n")
	stub(t, dir, "go", body.String())
	cmd := exec.Command("bash", "fuzz.sh", "FuzzX", "./proxy")
	cmd.Env = append(os.Environ(), "GO="+filepath.Join(dir, "go"))
	b, err := cmd.CombinedOutput()
	calls, _ := os.ReadFile(filepath.Join(dir, "calls"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(calls)))
	return string(b), n, err
}

const (
	fuzzPass         = "PASS"
	fuzzDeadlineOnly = "--- FAIL: FuzzX (10.13s)\n    context deadline exceeded\nFAIL"
	fuzzWroteCrasher = "--- FAIL: FuzzX (0.10s)\n    --- FAIL: FuzzX (0.00s)\n        panic: boom\n    Failing input written to testdata/fuzz/FuzzX/0a1b\nFAIL"
)

// Go's fuzz coordinator can fail a target on its own -fuzztime deadline
// with no failing input (go.dev/issue/75804, go1.26.x): that run is tried
// once more instead of failing make fuzz.
func TestFuzzRetriesTheCoordinatorsDeadlineOnce(t *testing.T) {
	out, calls, err := fuzzWithStubGo(t, fuzzDeadlineOnly, fuzzPass)
	if err != nil || calls != 2 {
		t.Fatalf("exit %v after %d runs; want success after 2\n%s", err, calls, out)
	}
	if !strings.Contains(out, "1 retried") {
		t.Errorf("the retry is not reported:\n%s", out)
	}
}

func TestFuzzFailsWhenTheDeadlineFailsTwice(t *testing.T) {
	out, calls, err := fuzzWithStubGo(t, fuzzDeadlineOnly, fuzzDeadlineOnly)
	if err == nil || calls != 2 || !strings.Contains(out, "fuzz: failed: ./proxy FuzzX") {
		t.Fatalf("exit %v after %d runs; want failure after 2\n%s", err, calls, out)
	}
}

// A failing input is a finding: it fails at once, never retried.
func TestFuzzFailsOnACrasherWithoutRetry(t *testing.T) {
	out, calls, err := fuzzWithStubGo(t, fuzzWroteCrasher, fuzzPass)
	if err == nil || calls != 1 || !strings.Contains(out, "fuzz: failed: ./proxy FuzzX") {
		t.Fatalf("exit %v after %d runs; want failure after 1\n%s", err, calls, out)
	}
}
