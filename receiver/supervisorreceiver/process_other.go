//go:build !unix

package supervisorreceiver

import (
	"errors"
	"io"
	"time"
)

type engineProcess struct {
	exited chan struct{}
	status exitStatus
}

func startEngine([]string, []string, string, io.Writer) (*engineProcess, error) {
	return nil, errors.New("spawn mode needs a Unix system; use attach mode (no command)")
}

func (p *engineProcess) stop(time.Duration) exitStatus { return exitStatus{} }

func (p *engineProcess) pid() int { return 0 }
