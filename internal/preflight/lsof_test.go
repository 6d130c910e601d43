package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Captured from Debian's lsof 4.95 (`lsof -nP -iTCP -sTCP:LISTEN -Fpc`
// with three Python listeners; `-iTCP:28080 -sTCP:LISTEN -Fpc`;
// `-iTCP:29300 -Fpcu`); macOS's lsof prints the same fields.
func TestParseLsofF(t *testing.T) {
	assert.Equal(t, []Holder{
		{PID: 23579, Command: "python3", UID: -1, Listening: true},
		{PID: 23580, Command: "python3", UID: -1, Listening: true},
		{PID: 23581, Command: "python3", UID: -1, Listening: true},
	}, ParseLsofF(readTestdata(t, "lsof_listen_all.txt")))
	assert.Equal(t, []Holder{{PID: 23404, Command: "python3", UID: -1, Listening: true}}, ParseLsofF(readTestdata(t, "lsof_listen_one.txt")))
	assert.Equal(t, []Holder{{PID: 24976, Command: "python3", UID: -1, Listening: true}}, ParseLsofF(readTestdata(t, "lsof_listen_uid.txt")), "other fields are skipped")
}

func TestParseLsofFOddInput(t *testing.T) {
	assert.Empty(t, ParseLsofF(nil))
	assert.Empty(t, ParseLsofF([]byte("cpython3\n")), "a command before any process")
	assert.Empty(t, ParseLsofF([]byte("p0\ncx\np-3\npabc\n")), "no positive pid")
	assert.Equal(t, []Holder{{PID: 7, Command: "a", UID: -1, Listening: true}},
		ParseLsofF([]byte("p7\r\nca\r\nf3\nn127.0.0.1:8080\np7\ncb\n")), "CRLF, file sets, a pid twice")
}

func FuzzParseLsofF(f *testing.F) {
	for _, n := range []string{"lsof_listen_all.txt", "lsof_listen_one.txt", "lsof_listen_uid.txt"} {
		f.Add(readTestdata(f, n))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		seen := map[int]bool{}
		for _, h := range ParseLsofF(b) {
			if h.PID <= 0 || seen[h.PID] {
				t.Fatalf("pid %d", h.PID)
			}
			seen[h.PID] = true
			if h.Command != FormatCmdline([]byte(h.Command)) {
				t.Fatalf("command %q is not formatted", h.Command)
			}
		}
	})
}
