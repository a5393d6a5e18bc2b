# Every recipe calls python3 only. `make` alone prints this help.
.DEFAULT_GOAL := help
PY ?= python3
NODE ?= nodes/hello_node.py
JOBS ?= 4
BENCH_ARGS ?=

.PHONY: help
help: ## list the targets
	@$(PY) -m conformance.suite help Makefile

.PHONY: test
test: ## everything: static checks, block sync, traceability, unit tests, conformance, mutants; ends with "N passed, N failed"
	@$(PY) -m conformance.suite test

.PHONY: check-fast
check-fast: ## the quick subset (under 60 s): static checks, block sync, traceability, harness unit tests
	@$(PY) -m conformance.suite check-fast

.PHONY: check
check: ## block sync plus the two traceability tables (MUST clause -> checks, check -> mutants); fails on any hole
	@$(PY) -m conformance.sync --check
	@$(PY) -m conformance.trace step

.PHONY: conformance
conformance: ## run the step contract's checks against the reference node (NODE=path to judge another)
	@$(PY) -m conformance step $(NODE) --jobs $(JOBS)

.PHONY: mutants
mutants: ## run every mutant of the reference node; each must be killed by the checks it names
	@$(PY) -m conformance.mutants step --jobs 2

.PHONY: bench
bench: ## measure the reference node beside the naive node and the bare copy loop: CPU/GiB, RSS, throughput, stop latency, cgroup (~5 min; BENCH_ARGS=--quick: ~25 s)
	@$(PY) -m conformance.bench --node $(NODE) $(BENCH_ARGS)

.PHONY: demo
demo: ## run the hello node against the embedded fake platform on a small real job
	@$(PY) examples/demo.py

.PHONY: sync
sync: ## rewrite the shared blocks embedded in nodes/*.py from nodes/blocks/
	@$(PY) -m conformance.sync

.PHONY: clean
clean: ## remove caches and scratch left by interrupted runs
	@$(PY) -m conformance.suite clean
