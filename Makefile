# toolselect: see README.md. `make demo` runs the main job, `make test` runs every test.
GO      ?= go
PYTHON  ?= python3
BIN     := bin/toolselect
LIB     := python/toolselect/libtoolselect.so
export CGO_ENABLED ?= 1

.PHONY: all build demo test test-go test-python vet fmt lib python wheel bench bench-python test-cgocheck2 eval reliability clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/toolselect

demo: build
	@bash examples/demo.sh

# Everything, with the race detector: Go packages, then the Python package
# against a freshly built shared library.
test: vet test-go test-python

vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test-go:
	$(GO) test -race -count=1 ./...

test-python: python
	@if [ -d python/tests ]; then cd python && $(PYTHON) -m unittest discover -s tests -t . -v; fi

fmt:
	gofmt -w $$(git ls-files '*.go')

# The C shared library and its header, built into the Python package.
lib: $(LIB)

$(LIB): $(shell find cabi internal registry selector executor rank -name '*.go' 2>/dev/null) go.mod go.sum
	$(GO) build -buildmode=c-shared -ldflags='-s -w' -o $(LIB) ./cabi
	rm -f python/toolselect/libtoolselect.h

python: lib

wheel: lib
	@bash python/build_wheel.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Python -> C -> Go overhead next to the same call from Go, and the 100k round-trip leak check.
bench-python: python
	PYTHONPATH=python $(PYTHON) bench/python_overhead.py --go
	PYTHONPATH=python $(PYTHON) bench/python_leak.py

# The Python suite against a library built with the strictest cgo pointer checks.
test-cgocheck2:
	GOEXPERIMENT=cgocheck2 $(GO) build -buildmode=c-shared -o .cache/cgocheck2/libtoolselect.so ./cabi
	cd python && TOOLSELECT_LIBRARY=$(CURDIR)/.cache/cgocheck2/libtoolselect.so TOOLSELECT_SKIP_WHEEL_TEST=1 $(PYTHON) -m unittest discover -s tests -t .

clean:
	rm -rf bin dist $(LIB)
