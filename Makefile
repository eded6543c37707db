# evokore — every check CI runs is a target here.

GO      ?= go
BIN     ?= bin/evokore
NPM_DIR := testdata/npm
PKGS    := ./...
# The version serverInfo and the startup line report: the checkout's tag
# or commit ("-dirty" with uncommitted changes).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build cross generate generate-check lint test test-short bench run npm-deps clean

all: build

build: ## Build bin/evokore.
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/evokore

cross: ## Build (not test) for Windows and macOS, so platform-specific paths keep compiling.
	GOOS=windows GOARCH=amd64 $(GO) build -o /dev/null ./...
	GOOS=darwin GOARCH=arm64 $(GO) build -o /dev/null ./...

generate: ## Regenerate the *_gen.go tables from evokore.cue.
	$(GO) generate ./...

generate-check: ## Fail when a generated file is stale.
	$(GO) run ./gen -check

lint: ## gofmt and go vet.
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './testdata/*')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

npm-deps: $(NPM_DIR)/node_modules/.installed ## Install the pinned npm MCP servers the tests use.

$(NPM_DIR)/node_modules/.installed: $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json
	# npm ci rejects this lock file over an optional Windows-only package
	# (npm 11); install honours the lock all the same.
	cd $(NPM_DIR) && npm install --no-audit --no-fund --loglevel=error
	touch $@

test: generate-check lint cross npm-deps ## Everything CI runs.
	$(GO) test -race -timeout 12m $(PKGS)

test-short: ## Unit tests only: no npm servers, no slow integration tests.
	$(GO) test -short $(PKGS)

bench: npm-deps ## Benchmarks; see the README for what each measures.
	$(GO) test -run '^$$' -bench . -benchmem -count 5 -timeout 30m $(PKGS)

run: ## Serve MCP over stdio from source; stdout carries only the protocol.
	@$(GO) run -ldflags "$(LDFLAGS)" ./cmd/evokore

clean:
	rm -rf bin $(NPM_DIR)/node_modules
