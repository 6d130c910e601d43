package supervisorreceiver

import "path/filepath"

// withRunToken is the command an engine run is started with: the configured
// one, and for mlx.launch, which starts every rank of a ring (config/
// ring.yaml), the run token added as --env MLX_OTELCOL_ENGINE_RUN=token.
// mlx.launch exports each --env in the script it runs for every rank. A
// rank it runs locally (the hostfile's ssh is 127.0.0.1, as
// scripts/render-config.sh writes rank 0) inherits the token anyway; a rank
// it starts over ssh does not (sshd's child, with sshd's environment, in a
// session of its own), and with the token in its environment the next
// collector's leftover cleanup and the preflight know it as ours: rank 0's
// mlx_lm.server, which holds the engine's port, even when the hostfile
// names this host by a host name.
func withRunToken(command []string, token string) []string {
	if len(command) == 0 || filepath.Base(command[0]) != "mlx.launch" {
		return command
	}
	out := make([]string, 0, len(command)+2)
	out = append(out, command[0], "--env", runTokenEnv+"="+token)
	return append(out, command[1:]...)
}
