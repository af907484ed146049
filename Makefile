# vkchat — `make run` starts the chat, `make test` runs every check.
GO      ?= go
BIN     := bin/vkchat
# No MODEL: the chat's first run picks one (stored models, the download
# offer, or offline the demo model built into the binary). MODEL=demo opens
# the demo directly.
MODEL   ?=
BACKEND ?= auto
FUZZTIME ?= 15s

.PHONY: all deps build run test vet shaders shaders-check fuzz race bench clean vk-validate gpu-check-dry

all: build

deps:
	@sh scripts/deps.sh

build: deps
	$(GO) build -o $(BIN) ./cmd/vkchat

run: build
	$(BIN) chat --backend $(BACKEND) $(if $(MODEL),--model $(MODEL))

shaders: deps
	sh shaders/build.sh

# The committed SPIR-V must be what the GLSL compiles to now.
shaders-check: shaders
	@test -z "$$(git status --porcelain -- shaders)" || { git status --short -- shaders; echo "shaders/ differs from a fresh build: run 'make shaders' and commit"; exit 1; }

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run 'go mod tidy' and commit"; exit 1; }

race:
	$(GO) test -race -count=1 ./runtime/engine/... ./ui/...

fuzz:
	sh scripts/fuzz.sh $(FUZZTIME)

# The Vulkan tests once more under the Khronos validation layer (with
# synchronization validation): any message fails (scripts/vk-validate.sh).
vk-validate:
	@WITH_VALIDATION=1 sh scripts/deps.sh
	sh scripts/vk-validate.sh

# scripts/gpu-check.sh's dry run on lavapipe must fail because the device is
# a CPU (the real run is for the device tool: README, "Real GPUs").
gpu-check-dry: build
	$(GO) test -c -o bin/vulkan.test ./runtime/vk/vulkan
	$(GO) test -c -o bin/vk.test ./runtime/vk
	sh scripts/gpu-check-dry.sh

test: deps shaders-check vet
	$(GO) test -count=1 -timeout 25m ./...
	@# the portable Go kernels (the fallback and the oracle) and the AVX2
	@# level, on machines whose default is a faster native level
	VKCHAT_CPU_KERNELS=portable $(GO) test -count=1 ./runtime/quant ./runtime/simd ./runtime/cpu
	VKCHAT_CPU_KERNELS=portable $(GO) test -count=1 -run 'Stories|Synth' ./runtime/engine
	VKCHAT_CPU_KERNELS=avx2 $(GO) test -count=1 ./runtime/quant ./runtime/simd
	@# the patched library copies are modules of their own: their tests
	@# (each patch's regression test among them) run from their folders
	cd third_party/ardanlabs-jinja && $(GO) test -count=1 ./...
	cd third_party/charmbracelet-bubbles && $(GO) test -count=1 ./textarea ./textinput ./runeutil
	cd third_party/muesli-cancelreader && $(GO) test -race -count=1 .
	cd third_party/charmbracelet-bubbletea && $(GO) test -race -count=1 ./...
	$(MAKE) --no-print-directory vk-validate
	$(MAKE) --no-print-directory gpu-check-dry
	$(MAKE) --no-print-directory race
	$(MAKE) --no-print-directory fuzz

bench: build
	$(BIN) bench --backend $(BACKEND) --model $(or $(MODEL),models/demo/stories260K.gguf)

clean:
	rm -rf bin
