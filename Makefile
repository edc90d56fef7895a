# The two commands of the README: `make demo` and `make test`. Both create .venv when missing.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# Settings default to DEBUG off (SECRET_KEY required); local runs and tests are development.
export DEBUG ?= 1

.PHONY: install demo test lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(BIN)/python pyproject.toml sdk/pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet --upgrade pip
	@# The SDK (sdk/: engine and bots_sdk) and the platform that depends on it, in one go.
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ./sdk -e '.[dev]'
	@# OpenSpiel is the reference engine of the differential tests; its Hearts needs no numpy.
	$(BIN)/python -m pip install --quiet --no-deps open_spiel==2.0.2 \
		|| echo "OpenSpiel is not installable here: its differential tests will be skipped"
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/python manage.py demo

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) var/*
