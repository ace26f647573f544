# Drainpipe build, test and demo entry points. `make help` lists them.
GO        ?= go
# The approved toolchain (go.mod's toolchain line); the go command fetches it
# from the module proxy on first use.
export GOTOOLCHAIN ?= go1.27.3
DIST      ?= dist
# One version: internal/version/VERSION, stamped with the commit into every build
# (-buildid= and -trimpath keep the bytes the same from one build to the next). Builds
# report VERSION-dev+COMMIT; only `make release` adds release=true, for the bare number.
VERSION   := $(shell cat internal/version/VERSION)
COMMIT    := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty)
VERSION_PKG := github.com/drainpipe/drainpipe/internal/version
LDFLAGS   := -s -w -buildid= -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT)
RELEASE   ?= $(DIST)/release
# Pinned: the CycloneDX SBOM generator, run from the module proxy.
CYCLONEDX ?= github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@v1.10.0
# Pinned: govulncheck, run from the module proxy; it needs the Go vulnerability database.
GOVULNCHECK ?= golang.org/x/vuln/cmd/govulncheck@v1.9.0
# The reproducibility check's second build: -a rebuilds every package, so it does not just
# reuse the first build's cache. REPRO_FLAGS= skips that (faster, weaker).
REPRO_FLAGS ?= -a
SANDBOX_BUILD := test/sandbox/build/build.sh
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION ?= 20

.PHONY: docs
.PHONY: help build build-local cli release notice test test-matrix budgets vulncheck test-short lint sandbox-build sandbox-up sandbox-down bench bench-wave chaos demo synth template fuzz fuzz-ci mutation clean

help:
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## the Lambda bootstrap (linux/arm64, static, stripped) and its zip in dist/
	@mkdir -p $(DIST)
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -tags lambda.norpc -ldflags '$(LDFLAGS)' -o $(DIST)/bootstrap ./lambda
	$(GO) run ./tools/mkzip $(DIST)/drainpipe.zip $(DIST)/bootstrap
	$(GO) run -trimpath -ldflags '$(LDFLAGS)' ./tools/versionfile $(DIST)/bootstrap.version
	@ls -l $(DIST)/bootstrap $(DIST)/drainpipe.zip

# $(call zip,GOARCH,DIR,EXTRA GO BUILD FLAGS): DIR/bootstrap-GOARCH and DIR/drainpipe-VERSION-linux-ARCH.zip
# (ARCH as Lambda names it: arm64 or x86_64).
zip_arch = $(if $(filter amd64,$(1)),x86_64,$(1))
define zip
	CGO_ENABLED=0 GOOS=linux GOARCH=$(1) $(GO) build $(3) -trimpath -tags lambda.norpc -ldflags '$(LDFLAGS)' -o $(2)/bootstrap-$(1) ./lambda
	$(GO) run ./tools/mkzip $(2)/drainpipe-$(VERSION)-linux-$(call zip_arch,$(1)).zip $(2)/bootstrap-$(1)
	rm $(2)/bootstrap-$(1)
endef

# $(call cli_build,GOOS,GOARCH,DIR,EXTRA GO BUILD FLAGS): DIR/drainpipe-VERSION-GOOS-GOARCH, the command.
cli_build = CGO_ENABLED=0 GOOS=$(1) GOARCH=$(2) $(GO) build $(4) -trimpath -ldflags '$(LDFLAGS)' -o $(3)/drainpipe-$(VERSION)-$(1)-$(2) ./cmd/drainpipe
# $(call clis,DIR,EXTRA GO BUILD FLAGS): the command for linux and darwin, amd64 and arm64.
define clis
	$(call cli_build,linux,amd64,$(1),$(2))
	$(call cli_build,linux,arm64,$(1),$(2))
	$(call cli_build,darwin,amd64,$(1),$(2))
	$(call cli_build,darwin,arm64,$(1),$(2))
endef

# $(call sbom,MAIN,GOOS,GOARCH,ARTEFACT,GOFLAGS): RELEASE/ARTEFACT.cdx.json, the CycloneDX SBOM of ARTEFACT,
# built from ./MAIN for GOOS/GOARCH (tools/sbomversion then names the release's version in each, and checks
# every artefact has its own).
define sbom
	CGO_ENABLED=0 GOOS=$(2) GOARCH=$(3) GOFLAGS=$(5) SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct 2>/dev/null || echo 0) \
		$(DIST)/tools/cyclonedx-gomod app -json -licenses -noserial -notimestamp -main $(1) -output $(RELEASE)/$(4).cdx.json .
endef

# A release build reports the bare VERSION (every other build VERSION-dev+COMMIT).
release: LDFLAGS += -X $(VERSION_PKG).release=true
release: ## dist/release/: bootstrap zips (arm64, x86_64) and the drainpipe command (linux, darwin; amd64, arm64), each built twice and compared, a CycloneDX SBOM per zip and command, template if any, SHA256SUMS
	$(GO) run ./tools/releasetag $(VERSION)
	rm -rf $(RELEASE) $(RELEASE).check
	@mkdir -p $(RELEASE) $(RELEASE).check
	$(call zip,arm64,$(RELEASE))
	$(call zip,amd64,$(RELEASE))
	$(call zip,arm64,$(RELEASE).check,$(REPRO_FLAGS))
	$(call zip,amd64,$(RELEASE).check,$(REPRO_FLAGS))
	$(call clis,$(RELEASE))
	$(call clis,$(RELEASE).check,$(REPRO_FLAGS))
	cd $(RELEASE).check && for z in *; do cmp "$$z" "../$(notdir $(RELEASE))/$$z" || { echo "release: $$z differs between two builds: not reproducible"; exit 1; }; done
	rm -rf $(RELEASE).check
	GOBIN=$(abspath $(DIST)/tools) $(GO) install $(CYCLONEDX)
	$(call sbom,lambda,linux,arm64,drainpipe-$(VERSION)-linux-arm64.zip,-tags=lambda.norpc)
	$(call sbom,lambda,linux,amd64,drainpipe-$(VERSION)-linux-x86_64.zip,-tags=lambda.norpc)
	$(call sbom,cmd/drainpipe,linux,amd64,drainpipe-$(VERSION)-linux-amd64)
	$(call sbom,cmd/drainpipe,linux,arm64,drainpipe-$(VERSION)-linux-arm64)
	$(call sbom,cmd/drainpipe,darwin,amd64,drainpipe-$(VERSION)-darwin-amd64)
	$(call sbom,cmd/drainpipe,darwin,arm64,drainpipe-$(VERSION)-darwin-arm64)
	$(GO) run ./tools/sbomversion $(RELEASE) $(VERSION)
	@if $(MAKE) -n template >/dev/null 2>&1; then $(MAKE) --no-print-directory template TEMPLATE_MAX_CLUSTERS=$(RELEASE_MAX_CLUSTERS) && cp dist/template/drainpipe.template.json $(RELEASE)/drainpipe-$(VERSION).template.json; \
	else echo "release: no template target yet; the release has no standalone template"; fi
	cd $(RELEASE) && sha256sum $$(ls | grep -v '^SHA256SUMS$$') > SHA256SUMS
	@cat $(RELEASE)/SHA256SUMS

notice: ## regenerate NOTICE from the bootstrap's modules (TestNoticeCurrent checks it)
	$(GO) run ./tools/notice

cli: ## dist/drainpipe: the drainpipe command for this machine (a development version)
	@mkdir -p $(DIST)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(DIST)/drainpipe ./cmd/drainpipe
	@$(DIST)/drainpipe version

build-local: ## the bootstrap for this machine (used by the end-to-end tests)
	@mkdir -p $(DIST)/local
	CGO_ENABLED=0 $(GO) build -trimpath -tags lambda.norpc -ldflags '$(LDFLAGS)' -o $(DIST)/local/bootstrap ./lambda

test: sandbox-build build ## everything: unit, sandbox, end-to-end and CDK tests
	$(GO) test -count=1 ./...
	cd infra && $(GO) test -count=1 ./...

# The support matrix (docs/support.md): the sandbox's Kubernetes versions, the oldest and the newest minor
# EKS supports; each has a module in test/sandbox/build (TestSupportMatrix holds the three together).
K8S_MATRIX ?= v1.32.13 v1.36.3
# The packages whose tests start the sandbox, less the fleet, chaos and benchmark rigs
# (TestSupportMatrixPackages keeps the list whole).
MATRIX_PKGS := ./cmd/drainpipe ./deploy ./internal/drain ./internal/eks ./internal/group ./internal/kevents \
	./internal/nodemap ./internal/pipeline ./internal/sweep ./test/e2e ./test/sandbox/...
test-matrix: ## the sandbox tests on each Kubernetes version of K8S_MATRIX (building its binaries: ~15 min each when cold, so not part of make test); a row per version for docs/support.md
	$(GO) run ./tools/testmatrix -build $(SANDBOX_BUILD) -out $(DIST)/matrix -versions '$(K8S_MATRIX)' $(MATRIX_PKGS)

budgets: sandbox-build ## measure (never assert) the bootstrap's size, start, memory and cordon latency budgets
	DRAINPIPE_BUDGETS=1 $(GO) test -count=1 -v -run 'Budget' ./test/e2e/

test-short: ## unit tests only (seconds; no sandbox, no CDK)
	$(GO) test -short ./...

lint: ## gofmt check and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd infra && $(GO) vet ./...
	cd examples/construct && $(GO) vet ./...

sandbox-build: ## build (or reuse) the sandbox binaries in the user cache
	$(SANDBOX_BUILD)

sandbox-up: sandbox-build ## start a local control plane on 127.0.0.1 and print its kubeconfig path
	$(GO) run ./test/sandbox/cmd/sandbox up

sandbox-down: ## stop the control plane started by sandbox-up (by its PIDs)
	$(GO) run ./test/sandbox/cmd/sandbox down

# Example context so `make synth` renders out of the box; pass your own
# (make synth SYNTH_ARGS='-c clusters=prod') or set them in cdk.json.
SYNTH_ARGS ?= -c clusters=example-cluster -c asgNamePrefix=example-

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

synth: build node_modules/.package-lock.json ## render the CloudFormation template into cdk.out/ with the pinned CDK CLI
	npx --no-install cdk synth --quiet $(SYNTH_ARGS)
	@ls cdk.out/*.template.json

# The standalone template: no CDK bootstrap, no BootstrapVersion, no asset;
# the code comes from its CodeBucket and CodeKey parameters. Settings come
# from SYNTH_ARGS as for synth. cfn-lint must pass (and be installed).
# TEMPLATE_MAX_CLUSTERS=N: its Clusters parameter takes 1 to N names (empty:
# exactly as many as SYNTH_ARGS' clusters).
TEMPLATE_MAX_CLUSTERS ?=
# The release's template serves 1 to this many clusters.
RELEASE_MAX_CLUSTERS ?= 10
template: node_modules/.package-lock.json ## the standalone CloudFormation template in dist/template/ (for CloudFormation, StackSets, Terraform, sam local), checked by cfn-lint
	@command -v cfn-lint >/dev/null || { echo "make template: cfn-lint is not installed (pip install cfn-lint); it checks the template" >&2; exit 1; }
	rm -rf cdk.out.template
	npx --no-install cdk synth --quiet -o cdk.out.template -c standalone=true $(if $(TEMPLATE_MAX_CLUSTERS),-c maxClusters=$(TEMPLATE_MAX_CLUSTERS)) $(SYNTH_ARGS)
	@mkdir -p $(DIST)/template
	cp cdk.out.template/*.template.json $(DIST)/template/drainpipe.template.json
	# No flags: what the stack does on purpose is acknowledged in the template's own Metadata.
	cfn-lint -- $(DIST)/template/drainpipe.template.json
	@ls -l $(DIST)/template/drainpipe.template.json

bench: sandbox-build ## drain benchmark on the sandbox: Drainpipe vs kubectl drain vs the unthrottled limit (~1 min)
	$(GO) run ./test/bench/drain

# Defaults fit a 2-core machine; e.g. WAVE_ARGS='-nodes 500 -spot 0.3' for more.
WAVE_ARGS ?=
bench-wave: sandbox-build build-local ## spot wave on a 200-node fleet: Drainpipe (event source + real bootstraps) vs the references and an NTH-style peer (~25 min; docs/performance.md#reproducing)
	$(GO) run ./test/bench/wave -bootstrap $(DIST)/local/bootstrap $(WAVE_ARGS)

chaos: sandbox-build build-local ## fault matrix: twelve faults injected into waves on the fleet rig, a table and the invariants (~15 min; CHAOS_ARGS='-run name,name -nodes N')
	$(GO) run ./test/bench/chaos -bootstrap $(DIST)/local/bootstrap $(CHAOS_ARGS)

demo: sandbox-build build-local ## the main job on a local sandbox: three nodes, a Spot warning and a terminate hook, with a timeline (<1 min warm); EKS=1: authenticated as on EKS
	$(GO) run ./test/demo -bootstrap $(DIST)/local/bootstrap $(if $(EKS),-eks)

.PHONY: earlier-fixtures
earlier-fixtures: sandbox-build ## regenerate test/events/earlier/0.1.0.json by running 0.1.0's own bootstrap on its own sandbox, from a temporary worktree of its commit (<1 min warm; not part of make test)
	test/events/earlier/gen/generate.sh 0.1.0 01113dd

docs: ## regenerate docs/configuration.md from the settings table
	$(GO) run ./tools/gendocs

vulncheck: ## known vulnerabilities reachable from the bootstrap, the CLI and the CDK app (needs the Go vulnerability database)
	$(GO) run $(GOVULNCHECK) ./...
	cd infra && $(GO) run $(GOVULNCHECK) ./...

fuzz: ## run the event parser fuzzer for 60 s
	$(GO) test ./internal/event -run '^$$' -fuzz FuzzParse -fuzztime 60s

# Every fuzz target, as package:Name (TestFuzzTargetsListed keeps the list whole). go test
# -fuzz takes one target per run; what a run finds is kept in the package's testdata/fuzz/.
FUZZ_TARGETS := ./internal/event:FuzzParse ./internal/event:FuzzSNSUnwrap ./internal/event:FuzzAutoScalingDirect \
	./internal/handler:FuzzAdmitRecord ./cmd/drainpipe:FuzzEventReaders
# Each target's budget is a number of executions, not a time: a time spent mostly starting the
# worker and minimising new inputs tested a few thousand. Minimising is bounded the same way.
# FUZZTIME_<Target> overrides one target's. FuzzEventReaders links the whole command, whose
# instrumented coverage map makes each execution slow (a few hundred a second on a loaded 2-core
# machine): its 100,000 take several minutes, still well inside CI's time.
FUZZTIME ?= 100000x
FUZZMINIMIZETIME ?= 1000x
fuzz_pkg = $(word 1,$(subst :, ,$(1)))
fuzz_name = $(word 2,$(subst :, ,$(1)))
fuzz_budget = $(or $(FUZZTIME_$(call fuzz_name,$(1))),$(FUZZTIME))
fuzz-ci: ## every fuzz target for FUZZTIME (100,000 executions) each; .ci/run runs it after make test
	@set -e; $(foreach t,$(FUZZ_TARGETS),\
		echo "fuzz-ci: $(call fuzz_name,$(t)) in $(call fuzz_pkg,$(t)) for $(call fuzz_budget,$(t))"; \
		$(GO) test $(call fuzz_pkg,$(t)) -run '^$$' -fuzz '^$(call fuzz_name,$(t))$$' -fuzztime $(call fuzz_budget,$(t)) \
			-fuzzminimizetime $(FUZZMINIMIZETIME);)

# Pinned: gremlins, the mutation tester, installed from the module proxy into dist/tools (the
# product module gains no dependency).
GREMLINS ?= github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
MUTATION_PKGS ?= event policy lifecycle group handler config sweep restore hold nodemap awserr instance redeliver metrics eks kevents version preflight notify live pipeline drain
# The floors every package must reach (percent).
MUTATION_EFFICACY ?= 90
MUTATION_COVERAGE ?= 85
# Each mutant runs its package's unit tests (-short: no control plane started per mutant; -count=1: the
# coverage run, which sets the timeout, is not a cached result; no vet
# and no DWARF, which only slow each mutant's build).
MUTATION_GOFLAGS ?= -short -count=1 -vet=off -ldflags=-w
# A mutant's tests time out at this many times the package's coverage run; raise it on a busy machine,
# where a slow build would otherwise count as a timeout.
MUTATION_TIMEOUT_COEFFICIENT ?= 3
mutation: ## mutation testing (gremlins) of the core packages, one at a time; a table of efficacy and mutator coverage, failing below MUTATION_EFFICACY / MUTATION_COVERAGE (slow: not part of make test)
	GOBIN=$(abspath $(DIST)/tools) $(GO) install $(GREMLINS)
	@mkdir -p $(DIST)/mutation
	@set -e; for p in $(MUTATION_PKGS); do \
		echo "mutation: internal/$$p"; rm -f $(DIST)/mutation/$$p.json; \
		GOFLAGS='$(MUTATION_GOFLAGS)' $(DIST)/tools/gremlins unleash --workers 2 --timeout-coefficient $(MUTATION_TIMEOUT_COEFFICIENT) \
			--output $(DIST)/mutation/$$p.json ./internal/$$p; \
	done
	$(GO) run ./tools/mutation -efficacy $(MUTATION_EFFICACY) -coverage $(MUTATION_COVERAGE) \
		$(foreach p,$(MUTATION_PKGS),$(DIST)/mutation/$(p).json)

clean:
	rm -rf $(DIST) cdk.out cdk.out.template
