# Entry points. `make html` and `make test` create the pinned environment (.venv) if missing.
VENV       ?= .venv
PYTHON     ?= $(VENV)/bin/python
BUILDDIR   ?= _build
# -j auto: Sphinx reads and writes the pages on every core.
SPHINXOPTS ?= -W --keep-going -j auto
PORT       ?= 8000

# Only the project's own venv is created here; `make probes PYTHON=python3` uses yours as is.
ifeq ($(PYTHON),$(VENV)/bin/python)
ENV := $(VENV)/.installed
endif

.PHONY: html lint test browser-test probes probes-portable matrix mutation bench serve clean env

html: $(ENV)
	$(PYTHON) -m sphinx -b html -c . $(SPHINXOPTS) docs $(BUILDDIR)/html

# The linters (pyproject.toml): ruff, and import-linter's contracts on the layers of verified/.
lint: $(ENV)
	$(PYTHON) -m ruff check .
	$(PYTHON) -c "from importlinter.cli import lint_imports_command; lint_imports_command()"

# The probes run isolated and are cached where `make html` looks: a build right after reuses them.
test: lint
	$(PYTHON) -m pytest tests
	$(PYTHON) -m verified.probing.runner --cache $(BUILDDIR)/probe-cache --out $(BUILDDIR)/probes/results.json probes

# The built site in headless chromium (Debian's package, installed here if missing).
browser-test: html
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)
	VERIFIED_BROWSER_TEST=1 $(PYTHON) -m pytest tests/browser -q -n 0

# The same per-file cache as `make html`: only changed probe files run.
# With OUT=<folder>, one recorded run of the torch PYTHON has, as installed, for the matrix
# (the GPU machine: `make probes PYTHON=python3 OUT=results/` writes results/torch-<v>-cuda.json).
probes: $(ENV)
ifdef OUT
	$(PYTHON) -m verified.releases.versions --python $(PYTHON) --out $(OUT)
else
	$(PYTHON) -m verified.probing.runner --cache $(BUILDDIR)/probe-cache --out $(BUILDDIR)/probes/results.json probes
endif

# The numerics, optimizer and dispatch probes on other CPU code paths than this machine's own:
# ATen's generic kernels, and MKL's conditional numerical reproducibility modes. A claim must
# hold on every machine; what differs is a measured figure (verified.probing.measured). Fails if any fails.
PORTABLE_PROBES ?= probes/tensor/test_notes_numerics.py probes/optim probes/dispatch
CODE_PATHS      ?= ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE MKL_CBWR=AVX2
probes-portable: $(ENV)
	@set -e; for setting in $(CODE_PATHS); do \
	  echo "probes-portable: $$setting"; \
	  env $$setting $(PYTHON) -m pytest -p no:cacheprovider -q --no-header $(PORTABLE_PROBES); \
	done

# Timings side by side (a benchmark, not a test): BENCH="--skip-cold --runs 3" to shorten.
bench: $(ENV)
	$(PYTHON) -m verified.bench $(BENCH)

# One environment per version under .venvs/ (reused), results under results/.
TORCH ?= 2.13.0
matrix: $(ENV)
	$(PYTHON) -m verified.releases.versions $(TORCH)

# MUTATE: probe folders or files (default: all of them). A probe file's outcomes are cached until
# it, what it imports, the probe tooling, torch or its mutants change; rm -rf $(BUILDDIR)/mutation-cache
# runs every mutant again.
MUTATE ?= probes
mutation: $(ENV)
	$(PYTHON) -m verified.mutation.run --cache $(BUILDDIR)/mutation-cache $(MUTATE)

serve:
	$(PYTHON) -m http.server --bind 127.0.0.1 --directory $(BUILDDIR)/html $(PORT)

clean:
	rm -rf $(BUILDDIR) docs/gallery docs/sg_execution_times.rst

env: $(VENV)/.installed

$(VENV)/.installed: requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@
