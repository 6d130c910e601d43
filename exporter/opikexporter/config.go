package opikexporter

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/mlx-otelcol/mlx-otelcol/internal/opikapi"
)

// Config of the opik exporter.
type Config struct {
	// Endpoint is Opik's API base: http://opik-host:5173/api behind Opik's
	// frontend, http://opik-host:8080 for the backend itself, or
	// https://www.comet.com/opik/api for Opik Cloud. Empty: the exporter
	// sends nothing (so a shipped pipeline can hold it until OPIK_URL is
	// set).
	Endpoint string `mapstructure:"endpoint"`
	// APIKey goes in the Authorization header, raw (Opik Cloud; self-hosted
	// Opik has no authentication by default).
	APIKey configopaque.String `mapstructure:"api_key"`
	// Workspace is the Comet-Workspace header (Opik Cloud).
	Workspace string `mapstructure:"workspace"`
	// Project is the Opik project the traces land in (the projectName
	// header) and that scores name.
	Project string `mapstructure:"project"`
	// Environment is Opik's environment of every trace and span written
	// (Opik 2.x filters by it: production, staging ...); "" sends none.
	Environment string `mapstructure:"environment"`
	// Timeout bounds each HTTP request to Opik.
	Timeout time.Duration `mapstructure:"timeout"`
	// BatchSize is the most requests (traces, and their spans) one REST
	// call carries (Opik takes 1 to 1000).
	BatchSize int `mapstructure:"batch_size"`
	// FeedbackScores writes the proxy's scores as Opik feedback scores.
	FeedbackScores FeedbackScoresConfig `mapstructure:"feedback_scores"`
	// ReadBack reads a sample of the scored traces back from Opik.
	ReadBack ReadBackConfig `mapstructure:"read_back"`
	// QueueConfig and RetryConfig are the exporter helper's, for spans and
	// for scores alike (each has a queue of its own; with `storage` both
	// survive a restart).
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	RetryConfig configretry.BackOffConfig                                `mapstructure:"retry_on_failure"`
}

// FeedbackScoresConfig says whether and how scores are written.
type FeedbackScoresConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// BatchSize is the most scores one PUT carries (Opik takes 1 to 1000).
	BatchSize int `mapstructure:"batch_size"`
}

// ReadBackConfig: one scored trace in Every is read back Delay after its
// scores were taken (mlx_opik_scores_unseen_total); Every 0 reads none.
// The delay leaves Opik time to make what it took visible.
type ReadBackConfig struct {
	Every int           `mapstructure:"every"`
	Delay time.Duration `mapstructure:"delay"`
}

// maxScoreBatch is Opik's limit on one feedback score batch.
const maxScoreBatch = opikapi.MaxScoreBatch

// Validate checks the configuration; the collector calls it at startup.
func (c *Config) Validate() error {
	var errs []error
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("endpoint: %q is not an http(s) URL (Opik's API base, e.g. http://opik-host:5173/api)", c.Endpoint))
		}
	}
	if strings.TrimSpace(c.Project) == "" {
		errs = append(errs, errors.New("project: must not be empty"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout: must be positive, got %s", c.Timeout))
	}
	if b := c.BatchSize; b < 1 || b > opikapi.MaxBatch {
		errs = append(errs, fmt.Errorf("batch_size: must be 1 to %d (Opik's limit), got %d", opikapi.MaxBatch, b))
	}
	if c.ReadBack.Every < 0 {
		errs = append(errs, fmt.Errorf("read_back.every: must be 0 (off) or more, got %d", c.ReadBack.Every))
	}
	if c.ReadBack.Delay < 0 {
		errs = append(errs, fmt.Errorf("read_back.delay: must not be negative, got %s", c.ReadBack.Delay))
	}
	if b := c.FeedbackScores.BatchSize; b < 1 || b > maxScoreBatch {
		errs = append(errs, fmt.Errorf("feedback_scores.batch_size: must be 1 to %d (Opik's limit), got %d", maxScoreBatch, b))
	}
	return errors.Join(errs...)
}

// tracesURL is Opik's OTLP/HTTP traces endpoint under the API base.
func (c *Config) tracesURL() string {
	return strings.TrimRight(c.Endpoint, "/") + "/v1/private/otel/v1/traces"
}

// client is the Opik REST client of the REST half.
func (c *Config) client() *opikapi.Client {
	return &opikapi.Client{Base: c.Endpoint, APIKey: string(c.APIKey), Workspace: c.Workspace,
		Project: c.Project, HTTP: &http.Client{Timeout: c.Timeout}}
}

// headers are the ones every request to Opik carries.
func (c *Config) headers() map[string]string { return c.client().Headers() }
