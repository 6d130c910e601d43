# mlx-otelcol: build the collector with ocb, run it, test it.
#   make run    build and run with config/mlx.yaml (the real mlx_lm.server)
#   make demo   the same distribution, with the simulated engine
#   make test   everything the project checks (.ci/run calls this)

SHELL       := /bin/bash
GO          ?= go
OCB_VERSION := v0.165.0
BIN         := $(CURDIR)/bin
OCB         := $(BIN)/builder
COLLECTOR   := $(CURDIR)/_build/mlx-otelcol
# The same source relinked as an older version (scripts/fleet-old-build.sh):
# the simulated fleet's old node. Defined here, before any rule names it as
# a prerequisite (make expands those as it reads them).
COLLECTOR_OLD := $(CURDIR)/_build/mlx-otelcol-old
MLXSIM      := $(BIN)/mlxsim
MLXJUDGE    := $(BIN)/mlxjudge
MLXBENCH    := $(BIN)/mlxbench
MLXPERF     := $(BIN)/mlxperf
# The distribution's version, stamped into mlxbench's reports.
DIST_VERSION := $(shell awk '/^  version:/ {print $$2; exit}' builder-config.yaml)
CONFIG      ?= config/mlx.yaml
# Go sources that end up in the collector binary.
COMPONENT_SRC := $(shell find receiver processor exporter extension proxy internal -name '*.go' -not -name '*_test.go' 2>/dev/null)

.PHONY: all build run demo test unit fuzz e2e fault e2e-stack tools clean mlxsim mlxjudge mlxbench report-render fleet-screenshots jaeger victorialogs promtool stores stores-darwin bench bench-profile bench-routing

mlxsim: $(MLXSIM)
## mlxjudge: one-off judge passes (bin/mlxjudge --once --dry-run).
mlxjudge: $(MLXJUDGE)

all: build $(MLXJUDGE) $(MLXBENCH)

## tools: ocb, pinned, into ./bin (the Go module proxy serves it).
tools: $(OCB)
$(OCB):
	GOBIN=$(BIN) $(GO) install go.opentelemetry.io/collector/cmd/builder@$(OCB_VERSION)

## build: the collector, from builder-config.yaml, into _build/.
build: $(COLLECTOR)
# flock (where there is one) keeps two builds from writing _build/ at once.
LOCK := $(shell command -v flock >/dev/null 2>&1 && echo flock .build.lock)
# The git commit the binary is built from, "-dirty" with uncommitted
# changes: mlx_agent_info's commit label (internal/fleet). ocb's own
# ldflags are "-s -w"; --ldflags replaces them, so they are repeated.
GIT_COMMIT  := $(shell c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD -- 2>/dev/null || c=$$c-dirty; echo $$c; })
LDFLAGS     := -s -w -X github.com/mlx-otelcol/mlx-otelcol/internal/fleet.commit=$(GIT_COMMIT)
# remove_all_sd: the prometheus receiver (config/push.yaml's scrape of the
# node's own ports, static targets) without Prometheus's cloud and cluster
# service discovery (prometheus v0.316.0 plugins/: AWS, Azure, GCE,
# Kubernetes, ...), which no shipped config uses; static, file and HTTP
# discovery stay. The fleet's older-version binary is linked with the same.
BUILD_GOFLAGS := $(GOFLAGS) -tags=remove_all_sd
$(COLLECTOR): $(OCB) builder-config.yaml go.mod go.sum $(COMPONENT_SRC)
	GOFLAGS="$(BUILD_GOFLAGS)" $(LOCK) $(OCB) --config builder-config.yaml --ldflags "$(LDFLAGS)"
	@touch $@

$(MLXSIM): $(shell find cmd/mlxsim standins/mlxsim -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod
	$(GO) build -o $@ ./cmd/mlxsim

$(MLXJUDGE): $(shell find cmd/mlxjudge internal/judge internal/opikapi internal/opikid -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod
	$(GO) build -o $@ ./cmd/mlxjudge

## mlxbench: the load, profile and agent rigs (bin/mlxbench; docs/mlxbench.md).
mlxbench: $(MLXBENCH)

$(MLXBENCH): $(shell find cmd/mlxbench cmd/mlxbench/bench testutil/promtext -name '*.go' -not -name '*_test.go' 2>/dev/null) $(wildcard cmd/mlxbench/bench/htmlreport/*.tmpl) go.mod
	$(GO) build -ldflags "-X main.version=$(DIST_VERSION)" -o $@ ./cmd/mlxbench

## report-render: mlxbench's HTML reports rendered in Debian's headless
## Chromium, every plot checked on a screenshot (about 20 s; installs
## chromium with apt-get when missing).
report-render:
	scripts/install-chromium.sh
	$(GO) vet -tags chromium ./cmd/mlxbench/
	$(GO) test -count=1 -tags chromium -run Chromium -timeout 5m ./cmd/mlxbench/

## fleet-screenshots: the three fleet dashboards rendered from a synthetic
## five-node fleet in VictoriaMetrics (docs/fleet-views.md) into
## docs/fleet/*.png with Debian's headless Chromium.
fleet-screenshots: rules-deps
	scripts/install-chromium.sh
	PATH="$(BIN):$$PATH" FLEET_SCREENSHOTS=$(CURDIR)/docs/fleet $(GO) test -count=1 -run TestFleetViewsOnASimulatedFleet ./dashboards/
	rm -f docs/fleet/*.html

# Overlays make run and make demo add: the live stream for VeloBenchmark
# (config/live.yaml), when it has a receiver; the engine's log and the
# judge's events by OTLP (config/otlp-logs.yaml), when they have a place.
OVERLAYS := $(if $(MLX_LIVE_ENDPOINT),--config config/live.yaml)
OVERLAYS += $(if $(MLX_LOG_OTLP_ENDPOINT),--config config/otlp-logs.yaml)

## stores: every store and its tools, pinned, built from the Go module proxy
## into ./bin for this host (scripts/install-stores.sh: VictoriaMetrics,
## vmalert, vmagent, Alertmanager, amtool, promtool, Jaeger, VictoriaLogs);
## a binary already at its pinned version is kept.
stores:
	scripts/install-stores.sh

## stores-darwin: the same set cross-compiled for a Mac (darwin/arm64) into
## bin/darwin-arm64, so a Mac build cannot rot unseen.
stores-darwin:
	scripts/install-stores.sh --target darwin/arm64

## jaeger: Jaeger v2, the trace store, built from the Go module proxy.
jaeger:
	scripts/install-stores.sh jaeger

## promtool: Prometheus's rule tester (the fault suite evaluates the SLO
## rules with it), built from the Go module proxy.
promtool:
	scripts/install-stores.sh promtool

## victorialogs: VictoriaLogs, the log store, built from the Go module proxy.
victorialogs:
	scripts/install-stores.sh victoria-logs

## run: the distribution with the real engine (mlx_lm.server on a Mac), and
## its stores beside it: Jaeger for the traces, VictoriaLogs for the logs.
run: $(COLLECTOR) $(MLXJUDGE)
	scripts/with-stores.sh $(COLLECTOR) --config $(CONFIG) $(OVERLAYS)

## demo: the distribution with the simulated engine in place of mlx_lm.server.
demo: $(COLLECTOR) $(MLXSIM) $(MLXJUDGE)
	MLXSIM=$(MLXSIM) scripts/with-stores.sh $(COLLECTOR) --config $(CONFIG) --config config/demo.yaml $(OVERLAYS)

## test: unit tests, the rule and config checks, end-to-end tests against
## the built binary, then the live VictoriaMetrics + vmalert + Alertmanager
## stack. The stores are built first (make stores; Debian's systemd and
## iproute2 are installed when missing), and the Mac's set is cross-compiled
## (make stores-darwin).
test: rules-deps stores-darwin unit fuzz obs-check report-render e2e fault e2e-stack

include rules/rules.mk

# The packages make unit tests with the race detector: every one that pools
# buffers, hands out views into them, or shares state across goroutines (the
# proxy, the components, their internals, the stand-ins, the test helpers,
# the commands: mlxbench's load loops, mlxsim, mlxperf, mlxjudge). No test
# asserts a speed (that is make bench), so the detector's slowing fails none.
RACE_PKGS := ./proxy/... ./receiver/... ./processor/... ./exporter/... ./extension/... ./internal/... ./standins/... ./testutil/... ./cmd/...
RACE_RE   := /(proxy|receiver|processor|exporter|extension|internal|standins|testutil|cmd)(/|$$)

unit:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './_build/*')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	CGO_ENABLED=0 GOOS=darwin GOARCH=arm64 $(GO) build ./...
	@# bin first: the tests that run promtool or vmalert find the pinned ones.
	PATH="$(BIN):$$PATH" $(GO) test -count=1 -race $(RACE_PKGS)
	PATH="$(BIN):$$PATH" $(GO) test -count=1 $$($(GO) list ./... | grep -vE '$(RACE_RE)')

## fuzz: every fuzz target (func Fuzz*) for FUZZTIME each, one at a time; a
## crasher fails the run and stays in the package's testdata/fuzz/ to commit;
## a failure with no failing input, only Go's own -fuzztime deadline race
## (go.dev/issue/75804), is run once more (scripts/fuzz.sh; 55 targets x 10 s).
FUZZTIME ?= 10s
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) scripts/fuzz.sh

e2e: $(COLLECTOR) $(MLXSIM) $(MLXJUDGE) jaeger victorialogs
	MLX_OTELCOL=$(COLLECTOR) MLXSIM=$(MLXSIM) MLXJUDGE=$(MLXJUDGE) JAEGER=$(BIN)/jaeger VLOGS=$(BIN)/victoria-logs $(GO) test -count=1 -tags e2e -timeout 15m ./test/e2e/...

## e2e-picker: the Gateway API Inference Extension's own endpoint picker
## code (test/gie, a module of its own for its Kubernetes dependencies)
## reads the proxy's vllm: gauges under load (compat [vllm]).
GIE_PICKER := $(BIN)/gie-picker
$(GIE_PICKER): test/gie/main.go test/gie/go.mod test/gie/go.sum
	cd test/gie && $(GO) build -o $@ .
.PHONY: e2e-picker npm-crosscheck
e2e-picker: $(COLLECTOR) $(MLXSIM) $(GIE_PICKER)
	GIE_PICKER=$(GIE_PICKER) MLX_OTELCOL=$(COLLECTOR) MLXSIM=$(MLXSIM) $(GO) test -count=1 -v -tags 'e2e picker' -timeout 10m -run TestVLLMGaugesAsTheEndpointPickerReadsThem ./test/e2e/...

## npm-crosscheck: OpenTelemetry's and Arize's OpenAI instrumentations on
## the openai npm client (test/npm, pinned in its package-lock.json; needs
## node and the npm registry) send requests through the built collector;
## what they record must be on the proxy's spans in Jaeger.
npm-crosscheck: $(COLLECTOR) $(MLXSIM) jaeger
	cd test/npm && npm ci --no-audit --no-fund --ignore-scripts
	MLX_OTELCOL=$(COLLECTOR) MLXSIM=$(MLXSIM) JAEGER=$(BIN)/jaeger $(GO) test -count=1 -v -tags 'e2e npm' -timeout 10m -run TestNPM ./test/e2e/...

## fault: the fault suite: the built binary and the simulated engine under
## faults and hostile input (the engine killed, hung or busy, the collector
## killed, sinks down, a full disk, 10,000 hostile requests, junk model
## names), printing a table of figures per case (about 6 min; root, for the
## tmpfs of the full disk).
fault: $(COLLECTOR) $(MLXSIM) jaeger victorialogs promtool
	MLX_OTELCOL=$(COLLECTOR) MLXSIM=$(MLXSIM) JAEGER=$(BIN)/jaeger VLOGS=$(BIN)/victoria-logs $(GO) test -count=1 -v -tags 'e2e fault' -timeout 15m -run TestFault ./test/e2e/...

## e2e-stack: the built collector in demo mode scraped by VictoriaMetrics
## with the shipped scrape config, vmalert with the shipped rules,
## Alertmanager with the shipped routing and a local webhook (about 2 min);
## two nodes in network namespaces (TestStackTwoNodes, about 3 min); three
## nodes pushing through a gateway (TestStackFleetPush, about 6 min); the
## fleet views on five simulated nodes (TestStackFleetSim, about 4 min).
e2e-stack: $(COLLECTOR) $(COLLECTOR_OLD) $(MLXSIM) rules-deps jaeger victorialogs
	MLX_OTELCOL=$(COLLECTOR) MLX_OTELCOL_OLD=$(COLLECTOR_OLD) MLXSIM=$(MLXSIM) JAEGER=$(BIN)/jaeger VLOGS=$(BIN)/victoria-logs $(GO) test -count=1 -tags 'e2e stack' -timeout 30m -run TestStack ./test/e2e/...

## The simulated fleet's node on an older version: the collector ocb
## generated, linked again with dist.version 0.0.9 (the version
## TestStackFleetSim expects).
$(COLLECTOR_OLD): $(COLLECTOR) scripts/fleet-old-build.sh
	GOFLAGS="$(BUILD_GOFLAGS)" $(LOCK) scripts/fleet-old-build.sh _build $@ 0.0.9

FLEET_ENV = MLX_OTELCOL=$(COLLECTOR) MLX_OTELCOL_OLD=$(COLLECTOR_OLD) MLXSIM=$(MLXSIM) JAEGER=$(BIN)/jaeger VLOGS=$(BIN)/victoria-logs

## fleet-20: TestStackFleetSim on twenty simulated nodes (docs/scaling.md,
## "A simulated fleet"; about 5 min), its cost logged as FLEETCOST.
## FLEET_NODES=10 make fleet-20 runs another size.
FLEET_NODES ?= 20
.PHONY: fleet-20 fleet-demo
fleet-20: $(COLLECTOR) $(COLLECTOR_OLD) $(MLXSIM) rules-deps jaeger victorialogs
	MLX_FLEET_NODES=$(FLEET_NODES) $(FLEET_ENV) $(GO) test -count=1 -v -tags 'e2e stack' -timeout 30m -run 'TestStackFleetSim$$' ./test/e2e/

## fleet-demo: the twenty-node fleet with its incidents, checked, then left
## running (FLEET_HOLD, 30m; an hour at most) for a person to look at the store,
## vmalert, Jaeger and VictoriaLogs whose addresses it prints; Ctrl-C ends
## it and removes the namespaces. FLEET_SCREENSHOTS=docs/fleet/live renders
## the three dashboards from it.
FLEET_HOLD ?= 30m
fleet-demo: $(COLLECTOR) $(COLLECTOR_OLD) $(MLXSIM) rules-deps jaeger victorialogs
	$(GO) test -c -tags 'e2e stack' -o _build/e2e-stack.test ./test/e2e/
	MLX_FLEET_NODES=$(FLEET_NODES) MLX_FLEET_HOLD=$(FLEET_HOLD) $(FLEET_ENV) \
	  _build/e2e-stack.test -test.count=1 -test.v -test.timeout 5h -test.run 'TestStackFleetSim$$'

## fleet-outage: TestStackFleetPush (make e2e-stack runs it with a 90 s
## outage) with the gateway stopped for 10 minutes: the nodes' queues on
## disk backfill it with no gap (about 16 min).
.PHONY: fleet-outage
fleet-outage: $(COLLECTOR) $(MLXSIM) rules-deps
	MLX_FLEET_OUTAGE=10m MLX_OTELCOL=$(COLLECTOR) MLXSIM=$(MLXSIM) $(GO) test -count=1 -v -tags 'e2e stack' -timeout 30m -run TestStackFleetPush ./test/e2e/...

## bench-routing: the front door over several engines (upstreams): the
## prompt cache's hit share and TTFT of mlxbench's agent loops with
## affinity, spread (routing.affinity none) and one engine alone, and what
## fails when an engine is killed or wedges under that load; a table in
## the test's log (opt-in, about 70 s; ROUTING_BENCH_AGENTS and
## ROUTING_BENCH_RUNS size it). Nothing asserts a time.
bench-routing: $(COLLECTOR) $(MLXSIM) $(MLXBENCH)
	MLX_OTELCOL=$(COLLECTOR) MLXSIM=$(MLXSIM) MLXBENCH=$(MLXBENCH) $(GO) test -count=1 -v -tags 'e2e routingbench' -timeout 40m -run TestRoutingBench ./test/e2e/

## bench: the distribution measured as a user would run it (bin/mlxperf,
## docs/performance.md): the built collector with the shipped config beside
## Debian's nginx, a bare Go httputil.ReverseProxy and no proxy, the same
## load on each in one run, at c=1, 16 and 64, streamed and not, behind
## mlx_lm 0.31.3's wire (streams without logprobs, the shipped 5 %
## destreaming, top-3 injection on non-streamed answers) and behind an
## engine that streams logprobs; chunk delays; the footprint idle and under
## 4 streamed chats, the original Python agents' (hellodk/mlx-oc, fetched
## by scripts/bench-agents.sh; MLX_OC_GIT=<local clone> without GitHub) in
## the same run, and nginx's and the Go proxy's CPU relaying the same chats.
## BASELINE=<git ref> builds the collector at that ref too
## (scripts/bench-baseline.sh) and runs it on the same loads, A B B A, each
## row with its ratio to it. MLXPERF_FLAGS: more flags (-cell 1s
## -footprint 15s for a quick look). Prints the tables and the goals, met
## or not (about 10 min; 13 with BASELINE, and its build). Then the Go benchmarks (about
## 5 min more), side by side in one run each: proxy vs direct (proxy/),
## tracing on (to a real Jaeger) vs off (receiver/proxyreceiver/). Figures
## to read; nothing asserts a time.
BASELINE      ?=
MLXPERF_FLAGS ?=
bench: $(COLLECTOR) $(MLXSIM) $(MLXPERF) jaeger
	scripts/install-deps.sh --bench
	agents=$$(scripts/bench-agents.sh) || agents=; \
	$(if $(BASELINE),base=$$(scripts/bench-baseline.sh $(BASELINE)) || exit 1;) \
	$(MLXPERF) -collector $(COLLECTOR) -mlxsim $(MLXSIM) -agents "$$agents" \
	  $(if $(BASELINE),-baseline "$$base" -baseline-ref $(BASELINE)) $(MLXPERF_FLAGS)
	JAEGER=$(BIN)/jaeger $(GO) test -run '^$$' -bench . -skip ChunkLatency -benchtime 2000x ./proxy/ ./receiver/proxyreceiver/
	# The chunk benchmarks pace the engine (a chunk every 5 ms): 400 streams each.
	$(GO) test -run '^$$' -bench ChunkLatency -benchtime 400x ./proxy/

## bench-profile: the proxy table with config/profile.yaml, saving the
## collector's CPU and allocation profiles under each load, and the
## footprint's, in bench-reports/profiles (go tool pprof them).
bench-profile: $(COLLECTOR) $(MLXSIM) $(MLXPERF)
	scripts/install-deps.sh --bench
	$(MLXPERF) -collector $(COLLECTOR) -mlxsim $(MLXSIM) -profile bench-reports/profiles

$(MLXPERF): $(shell find cmd/mlxperf cmd/mlxperf/perf testutil/loadgen standins/mlxsim -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod
	$(GO) build -o $@ ./cmd/mlxperf

clean:
	rm -rf _build bin .data

## install: the collector as a service (scripts/service.sh), enabled and
## started: a systemd unit on Linux, the user's launchd LaunchAgent on
## macOS. CONFIGS: its config files, passed as --config in this order
## (make install CONFIGS=config/node.yaml on a ring member). HOSTFILE: the
## ring's hostfile (config/ring/hosts.json). DESTDIR stages the files
## without starting anything; PREFIX as usual.
## uninstall: stops it and removes what install put; the data stays.
PREFIX  ?= /usr/local
CONFIGS ?= config/mlx.yaml
.PHONY: install uninstall
# install does not build: under sudo a rebuild would run as root, often
# without go on PATH.
install:
	@test -x $(COLLECTOR) || { echo "install: no $(COLLECTOR): make build first" >&2; exit 1; }
	BINARY="$(COLLECTOR)" CONFIGS="$(CONFIGS)" HOSTFILE="$(HOSTFILE)" PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/service.sh install
uninstall:
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/service.sh uninstall
