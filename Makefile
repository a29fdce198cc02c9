# The two commands: `make run` (the main job, offline) and `make test`.
# Both create .venv on first use and are safe to repeat.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
LOCAL_STAMP := $(VENV)/.installed-local
# the widget scripts HTML exports load offline (fetched once with npm; see hasbench/runner/html_export.py)
WIDGET_SCRIPTS := $(VENV)/share/hasbench/widget-scripts/embed-amd.js

.PHONY: run test setup setup-local lint clean-runs

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) -m ipykernel install --sys-prefix --name hasbench --display-name "Python (hasbench)" >/dev/null
	touch $@

# llama.cpp built for every x86-64 CPU with AVX2: a build native to a Xeon with AVX-512
# and AMX dies with SIGSEGV elsewhere (and on some of those Xeons). pip reuses a wheel it
# built before, so a native one found by the check is rebuilt from source.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF \
	-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
LLAMA_VERSION = $$($(PY) -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')

$(LOCAL_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install --quiet -e '.[dev,local]'
	$(PY) -m hasbench.llm check-build || { \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install --quiet --force-reinstall \
	    --no-deps --no-cache-dir --no-binary llama-cpp-python "llama-cpp-python==$(LLAMA_VERSION)" \
	  && $(PY) -m hasbench.llm check-build; }
	touch $@

$(WIDGET_SCRIPTS): $(STAMP)
	$(PY) -c 'import sys; from hasbench.runner.html_export import main; sys.exit(main())'

setup: $(STAMP) $(WIDGET_SCRIPTS)

setup-local: $(LOCAL_STAMP)

run: $(STAMP) $(WIDGET_SCRIPTS)
	$(PY) -m hasbench.cli notebook rq1

test: $(STAMP) $(WIDGET_SCRIPTS)
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check hasbench tests benchmarks
	$(PY) -m ruff format --check hasbench tests benchmarks
	$(VENV)/bin/lint-imports

clean-runs:
	rm -rf runs .cache
