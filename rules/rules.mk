# rules/rules.mk: the checks of the alert rules and the observability stack's
# configs. Included by the top-level Makefile (include rules/rules.mk); every
# target builds the tools it needs first (rules-deps: scripts/install-stores.sh,
# pinned, from the Go module proxy into bin/; scripts/install-deps.sh for
# Debian's systemd-analyze and ip).
#
#   make rules-check    promtool check rules + vmalert -dryRun on rules/*.yml
#   make rules-test     promtool test rules on rules/tests/*_test.yml
#   make config-check   rendered configs up to date, and accepted by promtool,
#                       VictoriaMetrics, vmagent and amtool (default and
#                       loopback renders)
#   make obs-check      all three
#   make obs-render     re-render config/scrape/scrape.yml,
#                       config/alertmanager/alertmanager.yml and
#                       config/ring/hosts.json from their templates
#                       (OBS_ENV=file adds an env file of the site's nodes)
#   make obs-start      run VictoriaMetrics + vmalert + Alertmanager, Jaeger and
#                       VictoriaLogs here with these configs
#                       (scripts/obs-stack.sh; OBS_ENV=file adds an env file,
#                       e.g. config/scrape/loopback.env)
#   make obs-stop       stop them

PROMTOOL         ?= $(BIN)/promtool
VMALERT          ?= $(BIN)/vmalert
VICTORIA_METRICS ?= $(BIN)/victoria-metrics
AMTOOL           ?= $(BIN)/amtool
VMAGENT          ?= $(BIN)/vmagent

RULE_FILES := $(sort $(wildcard rules/*.yml))
RULE_TESTS := $(sort $(wildcard rules/tests/*_test.yml))

.PHONY: rules-deps rules-check rules-test config-check obs-check obs-render obs-start obs-stop

rules-deps:
	@scripts/install-stores.sh
	@scripts/install-deps.sh

rules-check: rules-deps
	$(PROMTOOL) check rules $(RULE_FILES)
	$(VMALERT) -dryRun -loggerLevel=ERROR -rule='rules/*.yml'

rules-test: rules-deps
	$(PROMTOOL) test rules $(RULE_TESTS)

config-check: rules-deps
	scripts/render-config.sh --check
	$(PROMTOOL) check config config/scrape/scrape.yml
	$(VICTORIA_METRICS) -promscrape.config=config/scrape/scrape.yml -promscrape.config.dryRun -loggerLevel=ERROR
	@# The scrape config of a fleet that pushes (the heartbeats; docs/scaling.md).
	$(PROMTOOL) check config config/scrape/push.yml
	$(VICTORIA_METRICS) -promscrape.config=config/scrape/push.yml -promscrape.config.dryRun -loggerLevel=ERROR
	@# The same scrape config through vmagent, for a VictoriaMetrics cluster (docs/scaling.md).
	$(VMAGENT) -promscrape.config=config/scrape/scrape.yml -promscrape.config.dryRun -loggerLevel=ERROR
	$(AMTOOL) check-config config/alertmanager/alertmanager.yml
	@# Routing: critical pages on-call, warning and info go to the alert hook.
	@for case in oncall:critical alert:warning alert:info; do \
	  $(AMTOOL) config routes test --config.file=config/alertmanager/alertmanager.yml \
	    --verify.receivers=$${case%%:*} severity=$${case#*:} alertname=MLXServerDown node=rank0 >/dev/null 2>&1 || \
	    { echo "alertmanager: severity=$${case#*:} does not route to $${case%%:*}" >&2; exit 1; }; \
	done; echo "alertmanager routes: OK"
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  scripts/render-config.sh -e config/scrape/loopback.env -o "$$tmp" >/dev/null && \
	  $(PROMTOOL) check config "$$tmp/scrape.yml" && \
	  $(VICTORIA_METRICS) -promscrape.config="$$tmp/scrape.yml" -promscrape.config.dryRun -loggerLevel=ERROR && \
	  $(AMTOOL) check-config "$$tmp/alertmanager.yml" >/dev/null && \
	  echo "loopback render: OK"
	@# Every receiver channel on (made-up destinations): the template renders
	@# each into a config Alertmanager loads, pages and warnings apart.
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	  scripts/render-config.sh -e config/alertmanager/every-channel.env -o "$$tmp" >/dev/null && \
	  $(AMTOOL) check-config "$$tmp/alertmanager.yml" >/dev/null && \
	  for case in oncall:critical alert:warning; do \
	    $(AMTOOL) config routes test --config.file="$$tmp/alertmanager.yml" \
	      --verify.receivers=$${case%%:*} severity=$${case#*:} alertname=MLXServerDown >/dev/null || exit 1; \
	  done && \
	  for kind in webhook email slack discord telegram pushover; do \
	    [[ $$(grep -c "^    $${kind}_configs:" "$$tmp/alertmanager.yml") == 2 ]] || \
	      { echo "every-channel render: $$kind is not on both receivers" >&2; exit 1; }; \
	  done && echo "every channel render: OK"
	@! grep -q "_configs:" config/alertmanager/alertmanager.yml || \
	  { echo "alertmanager.yml: a channel is on by default; receivers.env leaves them all off" >&2; exit 1; }

obs-check: rules-check rules-test config-check

obs-render:
	scripts/render-config.sh $(if $(OBS_ENV),-e $(OBS_ENV))

OBS_ENV ?=
obs-start:
	scripts/obs-stack.sh start $(if $(OBS_ENV),-e $(OBS_ENV))

obs-stop:
	scripts/obs-stack.sh stop
