package fleet

import (
	"os"
	"strings"
)

// NodeEnv names the environment variable that names this node.
const NodeEnv = "MLX_NODE_NAME"

// NodeName is the node label of this process's series: configured when not
// empty, else $MLX_NODE_NAME, else the host name, else "unknown". The
// hardware receiver names a ring member by its rank instead (rankN, from
// the ring's hostfile) when neither is set.
func NodeName(configured string) string {
	if configured != "" {
		return configured
	}
	if n := strings.TrimSpace(os.Getenv(NodeEnv)); n != "" {
		return n
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "unknown"
}
