# Every recipe calls python3 only. `make` alone prints this help.
.DEFAULT_GOAL := help
PY ?= python3
CONTRACT ?=
NODE ?=
JOBS ?= 4
BENCH_ARGS ?=

.PHONY: help
help: ## list the targets
	@$(PY) -m conformance.suite help Makefile

.PHONY: test
test: ## everything CI runs (~13 min on 2 cores; CONTRACT=scan: that contract's share, ~4 min): block sync, traceability, unit tests, conformance, derivatives, mutants; ends with "N passed, N failed, N skipped"
	@$(PY) -m conformance.suite test $(CONTRACT)

.PHONY: test-pythons
test-pythons: ## every reference node's platform checks under the oldest and the newest Python here (--python; ~8 min)
	@$(PY) -m conformance.suite test-pythons

.PHONY: check-fast
check-fast: ## the quick subset (under 60 s): static checks, block sync, traceability, harness unit tests
	@$(PY) -m conformance.suite check-fast

.PHONY: check
check: ## block sync plus the two traceability tables per contract (MUST clause -> checks, check -> mutants); fails on any hole (~1 s)
	@$(PY) -m conformance.sync --check
	@$(PY) -m conformance.trace

.PHONY: conformance
conformance: ## judge the reference nodes (example work too, --reference) and the derivatives in examples/ (~6 min; CONTRACT=crawler NODE=path judges another node, ~1 min)
	@$(PY) -m conformance.suite conformance $(CONTRACT) $(NODE)

.PHONY: mutants
mutants: ## run every mutant of the reference nodes, each killed by the checks it names (~25 min; CONTRACT=crawler for one contract, 4 to 8 min)
	@$(PY) -m conformance.suite mutants $(CONTRACT)

# One bench per contract: conformance/bench/CONTRACT.py, run as python3 -m conformance.bench CONTRACT.
.PHONY: bench
bench: ## measure the step node beside the naive node and the bare copy loop: CPU/GiB, RSS, throughput, stop latency, cgroup (~5 min; BENCH_ARGS=--quick: ~25 s)
	@$(PY) -m conformance.bench step $(BENCH_ARGS)

.PHONY: bench-crawler
bench-crawler: ## measure the crawler node: peak RSS from 1x to 32x the result bound, stop latency mid-fetch and mid-child (~2 min; BENCH_ARGS=--quick)
	@$(PY) -m conformance.bench crawler $(BENCH_ARGS)

.PHONY: bench-session
bench-session: ## measure the session worker beside the naive one: probe latency, idle CPU, RSS over 1,000 probes, heartbeat under load, stop latency per phase (~6 min; BENCH_ARGS=--quick: ~1 min)
	@$(PY) -m conformance.bench session $(BENCH_ARGS)

.PHONY: bench-scan
bench-scan: ## measure the scan worker beside the naive one: throughput with 1 and 4 slots, idle CPU, peak RSS uploading 64 MiB and 1 GiB, restart after SIGKILL, stop latency (~6 min; BENCH_ARGS=--quick: ~1 min)
	@$(PY) -m conformance.bench scan $(BENCH_ARGS)

.PHONY: bench-hang
bench-hang: ## judge a node that hangs everywhere and ignores signals, per contract: at most 180 s each (~5 min)
	@$(PY) -m conformance.bench.hang

.PHONY: demo
demo: ## run the hello node against the embedded fake platform on a small real job (~1 s)
	@$(PY) examples/demo.py

.PHONY: dist
dist: ## build dist/conformance.pyz (~1 s): the harness and its contracts in one file, to run from any directory (python3 conformance.pyz step my_node.py)
	@$(PY) -m conformance.dist

.PHONY: sync
sync: ## rewrite the shared blocks embedded in nodes/*.py, and the machinery of the derivatives in examples/, from their sources
	@$(PY) -m conformance.sync

.PHONY: clean
clean: ## remove caches and scratch left by interrupted runs
	@$(PY) -m conformance.suite clean
