# The two commands: `make demo` and `make test`. Both install what they need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.bench-installed
DATA ?= var/marketplace.db

.PHONY: demo test lint typecheck pytest data install clean bench bench-install redis-server browser

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
