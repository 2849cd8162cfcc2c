# One entry point for everything. `make test` installs what is missing, then runs every suite.
SHELL := /bin/bash
SUITES ?= $(sort $(basename $(notdir $(wildcard scripts/suites/*.sh))))

.PHONY: test deps lint dist $(addprefix test-,$(SUITES)) help

help:
	@echo "make test         install missing dependencies, run every suite ($(SUITES))"
	@echo "make lint         shellcheck, php -l + phpcs, tsc --noEmit + Biome, varnishd -C on every VCL, helm lint + kubeconform"
	@echo "make test-<suite> run one suite without the install step"
	@echo "make dist         the plugin as users install it: dist/varnish-edge-<version>.zip (Upload Plugin)"
	@echo "make test-platforms  every cell of the platform matrix (platforms.json), one line each"
	@echo "make up|down|status  native WordPress + Varnish + purger stack (stack/README.md)"
	@echo "make audit        compare every page through Varnish with the origin: stale pages?"
	@echo "make chaos|soak   full-length fault scenarios | ten-minute soak (docs/reliability.md; figures in .results/reliability/)"
	@echo "make bench        origin vs NGINX microcache vs Varnish: k6, wrk and ab -k (docs/benchmarks.md; figures in .results/bench/)"
	@echo "make bench-hit-path MODE=compare|explain|ablate|profile  where a cache hit spends its time"
	@echo "make bench-profile  perf profile of NGINX, the minimal Varnish and the VCL on one hot post (needs linux-perf)"
	@echo "make bench-freshness  time-to-fresh after post edits and site-wide changes, by stage, readers' p99, refresh on/off (.results/bench/freshness.json;"
	@echo "                      BENCH_CPU_HOGS=2: the same with two busy processes competing, freshness-loaded.json)"
	@echo "make bench-cache-size  edit → fresh and Varnish CPU per edit with 1k, 10k and 100k pages cached, and a bulk action (.results/bench/cache-size.json)"
	@echo "make bench-purger the purger's throughput, latency and fan-out (purger/README.md; .results/purger/results.json)"
	@echo "make publish-results  copy the latest figures from .results/ to the tracked files, regenerate docs and chart"

test: deps lint
	@scripts/run-suites.sh $(SUITES)

# make lint: shellcheck, php -l + phpcs, tsc --noEmit + Biome, varnishd -C (scripts/lint/*.sh); make test runs it first.
lint:
	@scripts/lint.sh

deps:
	@scripts/install-deps.sh --platforms

# make dist: dist/varnish-edge-<version>.zip, the plugin folder's runtime files only (scripts/dist.sh).
dist:
	@scripts/dist.sh

$(addprefix test-,$(filter-out platforms,$(SUITES))): test-%:
	@scripts/run-suites.sh $*

# The whole matrix, the host's cells too (make test's `platforms` suite runs only the others).
test-platforms:
	@PLATFORMS_ALL=1 scripts/run-suites.sh platforms

# Native stack (stack/README.md): WordPress behind Varnish with the purger, under .stack/.
.PHONY: up down status audit
up:
	@stack/up.sh

down:
	@stack/down.sh

status:
	@stack/status.sh

# Reliability (docs/reliability.md): full-length faults and the ten-minute soak, each on its own
# native stack in a temporary directory; figures in .results/reliability/ (make publish-results
# copies them to reliability/results/).
.PHONY: chaos soak
chaos: deps
	@reliability/run.sh chaos

soak: deps
	@reliability/run.sh soak

# make audit [AUDIT_ARGS="--site https://example.com --origin http://10.0.0.5 ..."]
audit:
	@stack/audit.sh $(AUDIT_ARGS)

# make bench: k6, wrk and ab side-by-side benchmark on a fresh native stack (about 10 min;
# docs/benchmarks.md). Figures in .results/bench/; make publish-results puts them in the docs.
.PHONY: bench
bench: deps
	@bench/run.sh

# make bench-hit-path [MODE=compare|explain|ablate|profile]: where a cache hit spends its time, on a
# fresh native stack (bench/hit-path.sh; figures in .results/bench/hit-path/; docs/benchmarks.md
# "The hit path"). make bench-profile is MODE=profile (perf record of each cache; needs linux-perf).
.PHONY: bench-hit-path bench-profile
bench-hit-path: deps
	@bench/hit-path.sh $(or $(MODE),compare)
bench-profile: deps
	@bench/hit-path.sh profile

# make bench-freshness: time-to-fresh after post edits and site-wide changes under read load, the
# readers' p99 and waits on the origin, with the purger's refresh on and off, against a baseline of
# readers alone, and each post edit's time by stage (bench/freshness.sh; .results/bench/freshness.json;
# BENCH_CPU_HOGS=N: N busy processes compete for the CPUs, .results/bench/freshness-loaded.json).
.PHONY: bench-freshness
bench-freshness: deps
	@bench/freshness.sh

# make bench-cache-size: does an edit cost the same on a big cache? Varnish with the shipped VCL,
# Redis and the purger before a synthetic origin, 1k/10k/100k pages (bench/cache-size.sh; one to
# two minutes; .results/bench/cache-size.json).
.PHONY: bench-cache-size
bench-cache-size: deps
	@bench/cache-size.sh

# make bench-purger: ingest → Redis → worker → 2 varnishd throughput and latency (purger/README.md;
# .results/purger/results.json).
.PHONY: bench-purger
bench-purger: deps
	@cd purger && { [[ -d node_modules ]] || npm ci --no-audit --no-fund; } && npm run bench

# make publish-results: no run writes a tracked file; this copies the latest figures from .results/
# to bench/, reliability/results/, purger/bench/ and docs/img/ (the editor's live notice), and regenerates bench/chart.svg and the
# generated blocks of docs/benchmarks.md and README.md from bench/results.json.
.PHONY: publish-results
publish-results:
	@scripts/publish-results.sh
