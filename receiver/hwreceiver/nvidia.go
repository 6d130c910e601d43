package hwreceiver

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// nvidiaFields are the columns asked of nvidia-smi, in order. With
// --format=csv,noheader,nounits it prints one line per GPU: memory in MiB,
// power in W, clocks in MHz, utilisation in %, temperature in °C.
var nvidiaFields = []string{
	"index", "uuid", "name", "utilization.gpu", "memory.used", "memory.total",
	"power.draw", "temperature.gpu", "clocks.sm", "clocks.mem",
}

var nvidiaArgs = []string{"--query-gpu=" + strings.Join(nvidiaFields, ","), "--format=csv,noheader,nounits"}

// nvidiaSource is the slow Linux source for NVIDIA GPUs. nvidia-smi can
// take a second or more to answer when the driver's persistence mode is
// off, hence the slow cadence. A host without nvidia-smi has no NVIDIA GPU
// to report: the source does not apply there.
func nvidiaSource(run *commandRunner) slowSource {
	return slowSource{name: "nvidia_smi", collect: func(ctx context.Context) (func(*sample), error) {
		out, err := run.run(ctx, "nvidia-smi", nvidiaArgs...)
		if errors.Is(err, errCommandNotFound) {
			return nil, errNotApplicable
		}
		if err != nil {
			return nil, err
		}
		gpus, err := parseNvidiaSMI(out)
		if err != nil {
			return nil, err
		}
		return func(s *sample) { s.nvidia = gpus }, nil
	}}
}

// parseNvidiaSMI reads the CSV nvidia-smi prints for nvidiaArgs. A value
// the GPU does not support ("[N/A]", "[Not Supported]") is absent, never
// 0. Errors: no GPU line, or a line with the wrong number of columns.
func parseNvidiaSMI(b []byte) ([]nvidiaGPU, error) {
	r := csv.NewReader(bytes.NewReader(b))
	r.TrimLeadingSpace = true
	r.FieldsPerRecord = len(nvidiaFields)
	var gpus []nvidiaGPU
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi: %w", err)
		}
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		if rec[0] == "" {
			return nil, fmt.Errorf("nvidia-smi: a GPU line without an index: %q", strings.Join(rec, ", "))
		}
		gpus = append(gpus, nvidiaGPU{
			index:            rec[0],
			uuid:             rec[1],
			name:             rec[2],
			utilizationRatio: scaled(rec[3], 0.01),
			memUsedBytes:     scaled(rec[4], 1<<20),
			memTotalBytes:    scaled(rec[5], 1<<20),
			powerWatts:       scaled(rec[6], 1),
			tempCelsius:      scaled(rec[7], 1),
			smClockHz:        scaled(rec[8], 1e6),
			memClockHz:       scaled(rec[9], 1e6),
		})
	}
	if len(gpus) == 0 {
		return nil, errors.New("nvidia-smi: no GPU listed")
	}
	return gpus, nil
}

// scaled reads a plain decimal and multiplies it by unit; anything else
// ("[N/A]", "[Not Supported]", NaN, a negative number) is absent.
func scaled(s string, unit float64) *float64 {
	if s == "" || strings.ContainsAny(s, "[]eEnNiI") {
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return fp(v * unit)
}
