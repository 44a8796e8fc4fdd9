# lan743x rework lab. `make help` lists the targets.
SHELL := /bin/bash
PY ?= python3
CHECKS ?=
PATCHES ?=
STACK ?=
# make test runs the tests on two pytest-xdist workers, a test file to a
# worker at a time (--dist loadfile: a file's tests share its module
# fixtures, the VM they boot and its state), in the order
# tests/conftest.py gives: the selftests in the VM (both stacks, one after
# the other) first on two workers, the other files on the third. Each VM
# has one vCPU (tests/conftest.py sets VM_CPUS=1): a guest under TCG keeps
# at most one core busy and waits part of the time, so three share the
# two cores (README "Measured times": two guests of two vCPUs each kept
# four TCG threads on the two cores).
# PYTEST_XDIST= runs them one after the other.
PYTEST_XDIST ?= -n 3 --dist loadfile --no-loadscope-reorder

.PHONY: help setup tree export check kernel qemu unit test bench soak outage arm-e2e arm-bench arm-selftests

help:
	@echo "make bench   main job: build, boot the emulated LAN7430, A/B bench, table"
	@echo "make test    every test: series checks, lab unit tests, qtests, VM tests"
	@echo "make setup   install Debian and PyPI packages the lab needs"
	@echo "make tree    build/STACK/linux = base + parent stacks + patches/STACK (STACK=net-next default)"
	@echo "make export  rewrite patches/STACK from build/STACK/linux"
	@echo "make check   per-patch netdev checks of every stack (STACK=... for one)"
	@echo "make kernel  build the x86_64 guest kernel (cached)"
	@echo "make qemu    build QEMU with the lan7430 device model (cached)"
	@echo "make outage  outage of live MTU changes, upstream vs series"
	@echo "make soak    1000 live MTU/ring changes on the debug kernel (not CI)"
	@echo "make arm-e2e ARMv7 guest (virt, non-coherent DMA): e2e upstream vs series (STACK=6.12: the backport)"
	@echo "make arm-bench ARMv7 guest: count-based A/B bench, upstream vs series (REPS=5)"
	@echo "make arm-selftests ARMv7 guest: lan743x, hw and generic kselftests, upstream vs series"

setup:
	@bash lab/setup.sh

tree: setup
	@$(if $(STACK),STACK=$(STACK)) bash lab/series/tree.sh

export:
	@$(if $(STACK),STACK=$(STACK)) bash lab/series/export.sh

check: setup
	@$(PY) lab/series/check.py $(if $(STACK),--stack $(STACK)) $(if $(PATCHES),--patches $(PATCHES)) $(if $(CHECKS),--checks $(CHECKS))

kernel: setup
	@bash lab/kernel/kbuild.sh kernel guest

qemu: setup
	@bash emulator/build.sh

unit: setup
	@$(PY) -m pytest -q tests

test: setup
	@$(PY) lab/series/check.py
	@$(PY) -m pytest -q -rs --durations=25 $(PYTEST_XDIST) tests

bench: setup
	@$(PY) lab/bench/bench.py

# Long soak on the debug kernel (KASAN, kmemleak, lockdep, DMA-API debug):
# too long for CI. Builds the debug kernel (~30-45 min cold) and the
# series' module for it, then makes SOAK_CHANGES (default 1000) live MTU
# and ring-size changes under bidirectional TCP traffic and checks for
# splats, leaked page_pool pages and kmemleak reports (lab/guest/soak.sh).
soak: setup
	@mkdir -p results && obj=$$(bash lab/kernel/kbuild.sh kernel debug) && \
	  ko=$$(bash lab/kernel/kbuild.sh module debug series) && \
	  KERNEL=$$obj/arch/x86/boot/bzImage MODDIR=$$obj/mods VM_MEM=4G \
	  LAN743X_SOAK_CHANGES=$${SOAK_CHANGES:-1000} \
	  LAN743X_YNL=$$(bash lab/kernel/kbuild.sh srcrepo)/tools/net/ynl VM_TIMEOUT=14400 \
	  bash lab/vm/vm.sh lab/guest/soak.sh "$$ko" | tee results/soak-$$(date +%Y%m%d-%H%M%S).log

# Outage of live MTU changes, upstream vs the series (lab/bench/outage.py).
outage: setup
	@$(PY) lab/bench/outage.py $(if $(MODULES),--modules $(MODULES))

# The ARMv7 guest: qemu-system-arm, the armv7-virt kernel, a
# Debian armhf initramfs; e2e + DMA cache maintenance counts, upstream vs
# the series (lab/vm/arm-e2e.sh, docs/arm-guest.md). Not in `make test`;
# tests/test_vm_arm.py runs it with LAN743X_ARM=1.
arm-e2e: setup
	@$(if $(STACK),STACK=$(STACK)) bash lab/vm/arm-e2e.sh

# The ARM bench: upstream vs the series' module in the ARMv7
# guest (non-coherent DMA), count-based figures per packet (DMA map/unmap/
# sync calls and bytes, arch_sync_dma_for_* calls, page allocations,
# doorbells); results/arm-bench-<time>/ (records.jsonl, table.md).
# lab/bench/arm_bench.py --help; docs/arm-guest.md "ARM bench".
arm-bench: setup
	@$(PY) lab/bench/arm_bench.py $(if $(REPS),--reps $(REPS)) $(if $(CELLS),--cells $(CELLS)) $(if $(MODULES),--modules $(MODULES))

# The lan743x kselftests, our hw tests and the kernel's generic driver
# tests in the ARMv7 guest, upstream vs the series' module, both
# remote modes: as lab/selftests/selftests.py in the x86_64 VM, compared with the
# same expectations plus the ARM differences in
# lab/selftests/expected/net-next-armv7.txt. Not in `make test` (time).
arm-selftests: setup
	@$(PY) lab/selftests/arm_selftests.py $(if $(MODULES),--modules "$(MODULES)")
