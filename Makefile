# Two entry points for a fresh machine: `make demo` and `make test`.
# Each builds .venv from nothing on first use (torch 2.13.0, CPU build, before
# sentence-transformers so that no CUDA build of torch is pulled in).
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[text,onnx,distributed,ann,ir,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/osustat reproduce synthetic --out demo-output --jobs 2

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

clean:
	rm -rf $(VENV) demo-output
