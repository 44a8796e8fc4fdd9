# lan743x rework lab. `make help` lists the targets.
SHELL := /bin/bash
PY ?= python3
CHECKS ?=
PATCHES ?= patches

.PHONY: help setup tree export check kernel qemu unit test bench soak

help:
	@echo "make bench   main job: build, boot the emulated LAN7430, A/B bench, table"
	@echo "make test    every test: series checks, lab unit tests, qtests, VM tests"
	@echo "make setup   install Debian and PyPI packages the lab needs"
	@echo "make tree    build/linux = pinned base + patches/ (git repo, tag 'base')"
	@echo "make export  rewrite patches/ from build/linux base..HEAD"
	@echo "make check   per-patch netdev checks (W=1, sparse, ARM, checkpatch, ...)"
	@echo "make kernel  build the x86_64 guest kernel (cached)"
	@echo "make qemu    build QEMU with the lan7430 device model (cached)"

setup:
	@bash lab/setup.sh

tree: setup
	@bash lab/tree.sh

export:
	@bash lab/export.sh

check: setup
	@$(PY) lab/check.py --patches $(PATCHES) $(if $(CHECKS),--checks $(CHECKS))

kernel: setup
	@bash lab/kbuild.sh kernel guest

qemu: setup
	@bash emulator/build.sh

unit: setup
	@$(PY) -m pytest -q tests

test: setup
	@$(PY) lab/check.py --patches $(PATCHES)
	@$(PY) -m pytest -q -rs tests

bench: setup
	@$(PY) lab/bench.py

# Long soak on the debug kernel (KASAN, kmemleak, lockdep, fault injection):
# too long for CI. Builds the debug kernel (~30 min cold) and runs the
# guest end-to-end test with many more down/up and reload cycles.
soak: setup
	@obj=$$(bash lab/kbuild.sh kernel debug) && \
	  KERNEL=$$obj/arch/x86/boot/bzImage MODDIR=$$obj/mods VM_MEM=4G \
	  E2E_UPDOWN=$${SOAK_UPDOWN:-500} E2E_RELOAD=$${SOAK_RELOAD:-100} \
	  E2E_IPERF_TIME=$${SOAK_IPERF_TIME:-60} VM_TIMEOUT=14400 \
	  bash lab/vm.sh lab/guest/e2e.sh
