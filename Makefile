# The two commands a newcomer needs (both install what is missing first):
#   make run    build release and serve examples/quickstart.yaml on 127.0.0.1:8080
#   make test   build release and run unit, integration and conformance tests
# CI (.ci/run) also runs `make test-asan` (ASan+UBSan), `make test-tsan` (ThreadSanitizer) and
# `make fuzz` (libFuzzer, a bounded time per target).
PRESET ?= release
CONFIG ?= examples/quickstart.yaml
JOBS ?= $(shell nproc)

.PHONY: run build test test-asan test-tsan fuzz deps deps-test bench bench-limits bench-metering bench-affinity bench-guardrails gameday check-config format clean

deps:
	scripts/install-deps.sh

deps-test:
	scripts/install-deps.sh --test

build: deps
	cmake --preset $(PRESET) >/dev/null
	cmake --build --preset $(PRESET) -j $(JOBS)

run: build
	./build/$(PRESET)/sluice serve --config $(CONFIG)

check-config: build
	./build/$(PRESET)/sluice check-config $(CONFIG)

test: deps-test
	scripts/run-tests.sh release

test-asan: deps-test
	scripts/run-tests.sh asan

test-tsan: deps-test
	scripts/run-tests.sh tsan

# libFuzzer targets (tests/fuzz/README.md): replays the regression inputs, then 20 s per target.
FUZZ_SECONDS ?= 20
fuzz: deps-test
	scripts/run-fuzz.sh $(FUZZ_SECONDS)

bench:
	scripts/install-deps.sh --bench
	bench/run.sh

# Added latency and c=64 throughput of admission by rate limits: off, local, Redis (~3 minutes).
bench-limits:
	scripts/install-deps.sh --bench
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)
	bench/limits.sh

# Cost of the access log and of metering (usage records into SQLite), one at a time (~4 minutes).
bench-metering:
	scripts/install-deps.sh --bench
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)
	bench/metering.sh

# prefix_affinity vs weighted over three mock providers that keep prompt caches: the share of
# prompt tokens read from a cache, and of turns that read the whole previous prompt (~10 s).
bench-affinity:
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)
	node bench/prefix_affinity.mjs

# What input guardrails cost a whole request (4 KB and 100 KB prompts, passthrough and
# translated, against none), then the added time to first token of output guardrails on
# streams: hold-back windows of 16, 64 and 256 characters against none (~6 minutes).
bench-guardrails:
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)
	scripts/install-deps.sh --bench
	bench/guardrails.sh
	node bench/guardrails_ttft.mjs

# Game day (bench/README.md): a provider returns 429, then 503, then stalls, then heals under
# steady load; Sluice vs Portkey with fallback. About 16 minutes; GAMEDAY_ARGS=--quick for a
# 3-minute smoke run that does not touch bench/RESULTS.md.
GAMEDAY_ARGS ?=
gameday:
	scripts/install-deps.sh --bench
	bench/gameday.sh $(GAMEDAY_ARGS)

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf build
