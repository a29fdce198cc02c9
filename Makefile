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

$(LOCAL_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,local]'
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
