# Two commands do all the set-up on a fresh Linux machine with Python 3.11:
#   make demo   - a small CNN trained for a few steps on CPU under pyprof_live.profile(), report printed
#   make test   - the whole test suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# torch is pinned: 2.13.0 is the CPU build (an unpinned torch pulls a multi-GB CUDA build).
TORCH := torch==2.13.0

.PHONY: demo test test-torch-matrix lint clean

# setup.py and the .c files: pip install -e builds the optional C extensions in place (a failed build leaves the pure-Python code).
$(VENV)/.installed: pyproject.toml setup.py pyprof_live/capture/_hook.c pyprof_live/_int_fields.c
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(TORCH)
	$(PY) -m pip install --quiet -e '.[test,lint]'
	touch $@

demo: $(VENV)/.installed
	$(PY) examples/train_cnn.py

test: $(VENV)/.installed
	$(PY) -m pytest -q

# The torch-dependent tests again on the oldest supported torch and the newest on the registry, each in a
# cached venv of its own (.ci/torch_matrix.py says how); .ci/run runs it after `make test`.
test-torch-matrix: $(VENV)/.installed
	$(PY) .ci/torch_matrix.py oldest newest

# Formatting, lint, types and the import-layer contract (pyproject.toml); .ci/run runs it before the tests.
lint: $(VENV)/.installed
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache build pyprof_live/capture/_hook*.so pyprof_live/_int_fields*.so
