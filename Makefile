# The two commands of the README: `make demo` and `make test`. Both create .venv when missing.
# `make demo` installs only what runs the platform; `make test` adds the test and dev tools.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# Settings default to DEBUG off (SECRET_KEY required); local runs and tests are development.
export DEBUG ?= 1
# When `make` began: the demo prints how long it took from here to healthy.
export BIDEL_DEMO_STARTED := $(shell date +%s.%N)

.PHONY: install install-run demo test lint messages clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The SDK (sdk/: engine and bots_sdk) and the platform that depends on it, in one go. Here the
# SDK is built compiled: its hot modules by mypyc where a C compiler is, else pure Python
# (sdk/setup.py; an author's `pip install ./sdk` is pure, and `bidel compile` compiles it).
export BIDEL_ENGINE_BUILD ?= auto
$(VENV)/.installed-run: $(BIN)/python pyproject.toml sdk/pyproject.toml sdk/setup.py constraints.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt \
		-e ./sdk -e .
	touch $@ $(VENV)/.engine-built

# A hot module edited since it was compiled: compile again (until then it runs as pure Python,
# and the engine warns that its build is stale).
HOT := $(wildcard engine/*.py) bots_sdk/sampling.py bots_sdk/rollout.py bots_sdk/search.py
$(VENV)/.engine-built: $(HOT) | $(VENV)/.installed-run
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e ./sdk
	touch $@

$(VENV)/.installed: $(VENV)/.installed-run
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt \
		-e '.[dev]'
	@# OpenSpiel is the reference engine of the differential tests; its Hearts needs no numpy.
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps open_spiel==2.0.2 \
		|| echo "OpenSpiel is not installable here: its differential tests will be skipped"
	touch $@

# The bytecode of the engine and the SDK written once here: a sandboxed bot sees them read-only
# and would otherwise compile every module it imports at each start.
install-run: $(VENV)/.installed-run $(VENV)/.engine-built
	@$(BIN)/python -m compileall -q engine bots_sdk
	@$(BIN)/python -c "import engine; print(f'bidel: the engine is {engine.BUILD}')"
install: $(VENV)/.installed install-run

demo: install-run
	$(BIN)/python manage.py demo

# Four workers: every file handed whole to the next free worker (the Docker engine's two
# files first), each worker with services of its own (tests/lanes.py, conftest.py say how;
# -p loads the plugin that gives them, before the settings load).
test: install
	$(BIN)/python -m pytest -p tests.lanes -n 4 $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# After changing the pages' English: refresh the Persian catalog (arena/locale), translate what
# it marks new, then compile it (needs gettext's msgfmt; the compiled .mo files are committed).
messages: install-run
	cd arena && ../$(BIN)/python ../manage.py makemessages -l fa --no-obsolete \
		&& ../$(BIN)/python ../manage.py makemessages -d djangojs -l fa --no-obsolete \
		&& ../$(BIN)/python ../manage.py compilemessages -l fa

clean:
	rm -rf $(VENV) var/* sdk/build
	find engine bots_sdk -name '*.so' -delete; rm -f engine/_compiled.json
