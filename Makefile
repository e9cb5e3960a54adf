# farm — the commands a newcomer and CI run.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install lint test soak test-unit test-integration test-e2e fuzz demo bench bench-breakdown bench-variants clean

$(BIN)/farm: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	@touch $(BIN)/farm

install: $(BIN)/farm

# The code's format and lint (ruff) and its types (mypy: every module of farm, farm.crawl and farm.state strictly), both
# configured in pyproject.toml; `ruff format farm tests bench` fixes the format.
lint: install
	$(BIN)/ruff format --check farm tests bench
	$(BIN)/ruff check farm tests bench
	$(BIN)/mypy

# Every test: unit (no services), integration (real MariaDB, PostgreSQL and Redis), e2e (real crawls), in
# TEST_WORKERS processes (pytest-xdist; 1 runs them in this one, in order). A worker that runs out
# takes tests queued for another (worksteal): so the long kill tests do not end the run alone. A fault
# test repeated over the databases or the sites runs one of them here, the databases and sites shared out
# among the tests so that each is under some fault; `make soak` runs the rest (docs/benchmarks.md, the
# test suite). Under 15 minutes on the 2-core machine.
TEST_WORKERS ?= 2
test: install
	$(BIN)/python -m pytest $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist worksteal)

# The longer runs (FARM_SOAK=1), each a matrix `make test` holds one corner of: the e2e day of faults and the
# whole crawl on every site and every database, kill -9 of a crawl and of its state writer on each database
# and twice as many kills, a checkpointed crawl killed at 20 moments, eight claimers racing on MariaDB too,
# the state writer's process tests and its faults on every database, the API's fuzz runs on both databases,
# every site's walls, strange walls and puzzle, and refusal of every session, the identities through the
# tests' own proxy as well as tinyproxy, `farm report`'s settings on MariaDB too. `make test` and `make soak`
# together run every test with every parameter.
SOAK_TESTS := tests/e2e/test_real_day.py tests/e2e/test_crawl.py tests/e2e/test_strange_walls.py \
	tests/e2e/test_identities.py tests/integration/test_salary_numbers.py tests/e2e/test_crash.py \
	tests/e2e/test_checkpoint.py::test_kill_9_at_random_moments_resumes_at_once_and_loses_nothing \
	tests/integration/test_claim_concurrency.py tests/integration/test_api_fuzz.py tests/integration/test_state_writer.py \
	tests/e2e/test_walls.py::test_the_demo_keywords_crawl_to_completion_through_the_walls_every_posting_once \
	tests/e2e/test_walls.py::test_a_crawl_of_hundreds_of_pages_is_coherent_and_keeps_its_connections \
	tests/e2e/test_browser_lifecycle.py::test_a_site_that_refuses_every_session_on_its_first_use_ends_the_crawl_as_site_refused
soak: install
	FARM_SOAK=1 $(BIN)/python -m pytest $(SOAK_TESTS)

test-unit: install
	$(BIN)/python -m pytest tests/unit

test-integration: install
	$(BIN)/python -m pytest tests/integration

test-e2e: install
	$(BIN)/python -m pytest tests/e2e

# The keyword API's fuzz run (schemathesis), longer than in `make test`, with a fresh seed and on both databases.
fuzz: install
	FARM_SOAK=1 FARM_FUZZ_EXAMPLES=$${FARM_FUZZ_EXAMPLES:-300} FARM_FUZZ_SEED=$${FARM_FUZZ_SEED:-$$(date +%s)} \
		$(BIN)/python -m pytest tests/integration/test_api_fuzz.py

# The three spiders against the sandbox, on the embedded defaults (SQLite in demo-run/demo.db, the demo's own).
demo: install
	$(BIN)/farm demo

bench: install
	$(BIN)/python -m bench

# Where farm's crawl spends its core beyond plain Scrapy's, part by part (bench/crawl_breakdown.py).
bench-breakdown: install
	$(BIN)/python -m bench.crawl_breakdown

# farm's crawl with experimental patches, against plain Scrapy and farm (bench/variants.py):
# make bench-variants VARIANTS="page=postings_from_page.patch before=@COMMIT" (a patch, an earlier commit)
bench-variants: install
	$(BIN)/python -m bench.variants $(VARIANTS)

clean:
	rm -rf $(VENV) demo-run .pytest_cache .mypy_cache
