package jsonlexporter

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
)

// Formats of a line of the file.
const (
	// FormatRecord writes one JSON object per log record (see documentation.md).
	FormatRecord = "record"
	// FormatOTLPJSON writes one OTLP/JSON ExportLogsServiceRequest per batch,
	// as contrib's file exporter does (the original stack's file).
	FormatOTLPJSON = "otlp_json"
)

// Config of the mlx_jsonl exporter.
type Config struct {
	// Path of the file; rotated copies sit beside it (name-<time>.ext).
	Path string `mapstructure:"path"`
	// Format of each line: record (default) or otlp_json.
	Format   string         `mapstructure:"format"`
	Rotation RotationConfig `mapstructure:"rotation"`
	// QueueConfig is the exporter helper's sending queue; with `storage` it
	// survives a restart. It must have a single consumer: the file is written
	// in the order the records came.
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	RetryConfig configretry.BackOffConfig                                `mapstructure:"retry_on_failure"`
	// HealthKey names the pipeline whose health series count this sink.
	HealthKey string `mapstructure:"health_key"`
}

// RotationConfig: the keys of contrib's file exporter.
type RotationConfig struct {
	// MaxMegabytes rotates the file before it would grow past this size.
	MaxMegabytes int `mapstructure:"max_megabytes"`
	// MaxBackups is how many rotated files are kept (0 keeps all).
	MaxBackups int `mapstructure:"max_backups"`
	// MaxDays removes rotated files older than this (0 keeps them).
	MaxDays int `mapstructure:"max_days"`
	// LocalTime names rotated files in local time instead of UTC.
	LocalTime bool `mapstructure:"localtime"`
	// Compress gzips rotated files.
	Compress bool `mapstructure:"compress"`
}

// Validate checks the configuration; the collector calls it at startup.
func (c *Config) Validate() error {
	var errs []error
	if c.Path == "" {
		errs = append(errs, errors.New("path: must be set"))
	}
	if c.Format != FormatRecord && c.Format != FormatOTLPJSON {
		errs = append(errs, fmt.Errorf("format: %q is not one of %s, %s", c.Format, FormatRecord, FormatOTLPJSON))
	}
	if c.Rotation.MaxMegabytes <= 0 {
		errs = append(errs, fmt.Errorf("rotation.max_megabytes: must be positive, got %d", c.Rotation.MaxMegabytes))
	}
	if c.Rotation.MaxBackups < 0 {
		errs = append(errs, fmt.Errorf("rotation.max_backups: must not be negative, got %d", c.Rotation.MaxBackups))
	}
	if c.Rotation.MaxDays < 0 {
		errs = append(errs, fmt.Errorf("rotation.max_days: must not be negative, got %d", c.Rotation.MaxDays))
	}
	if c.QueueConfig.HasValue() && c.QueueConfig.Get().NumConsumers != 1 {
		errs = append(errs, fmt.Errorf("sending_queue.num_consumers: must be 1 so the file keeps the order of the records, got %d", c.QueueConfig.Get().NumConsumers))
	}
	if c.HealthKey == "" {
		errs = append(errs, errors.New("health_key: must not be empty"))
	}
	return errors.Join(errs...)
}
