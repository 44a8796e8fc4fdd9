# lan743x rework lab. `make help` lists the targets.
SHELL := /bin/bash
PY ?= python3
CHECKS ?=
PATCHES ?=
STACK ?=
# ARCH: the guest of make bench, e2e and selftests: x86_64 or armv7 (QEMU
# virt, 32-bit, non-coherent PCI DMA). Not exported: the kernel's make
# reads ARCH from the environment, the lab passes it where it is meant.
ARCH ?= x86_64
unexport ARCH
# FULL=1: make bench's whole matrix (default: a first run's subset)
FULL ?=
# make test runs the series checks beside the tests (lab/test.sh), and
# the tests on three pytest-xdist workers, a test file to a
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

.PHONY: help setup tree export check kernel qemu unit test bench e2e selftests ksft soak outage partner lineout sweep arm-e2e arm-bench arm-selftests board

help:
	@echo "make bench   main job: build, boot the emulated LAN7430, A/B bench upstream vs series, table"
	@echo "             (TCP RX at MTU 1500 and 9000, 5 reps, ~15 min warm; FULL=1: every cell, both swiotlb settings)"
	@echo "make test    every test: series checks, lab unit tests, qtests, VM tests"
	@echo "make setup   install Debian and PyPI packages the lab needs"
	@echo "make tree    build/STACK/linux = base + parent stacks + patches/STACK (STACK=net-next-2 default)"
	@echo "make export  rewrite patches/STACK from build/STACK/linux (CHAIN=1: its parent stacks too;"
	@echo "             SIGNOFF=1: signed off by your git identity, which must not be a placeholder)"
	@echo "make check   per-patch netdev checks of every stack (STACK=... for one)"
	@echo "make kernel  build the x86_64 guest kernel (cached)"
	@echo "make qemu    build QEMU with the lan7430 device model (cached)"
	@echo "make outage  outage of live MTU changes, upstream vs series (PLAN=1500to9000, 9000to1500,"
	@echo "             8000to9000, 9000to8000, 1500to1400, 1400to1500, rx128to512,"
	@echo "             rx512to128: one kind of change)"
	@echo "make partner the link partner on a host tap: its wire rate and CPU, TCP and 1 Gbit/s UDP"
	@echo "             (ICOUNT=0,2: in model time at those icount shifts)"
	@echo "make lineout the live changes while the partner on a host tap sends at 1 Gbit/s: frames the"
	@echo "             device drops per change, upstream vs series, icount (PLAN=, ICOUNT=2, MODEL=)"
	@echo "make sweep   the count cells and the outage at the corners of the model's unknowns"
	@echo "             (FIFO size, stop latency, pause, write-back at stop; REPS=, FACTORIAL=1, ARCH=armv7)"
	@echo "make soak    1000 live MTU/ring changes on the debug kernel (not CI)"
	@echo "make e2e     guest e2e, upstream vs series module (STACK=6.12-2: the backport)"
	@echo "make selftests  lan743x, hw and generic kselftests in the guest, upstream vs series"
	@echo "make ksft    every file of the kselftest targets drivers/net and drivers/net/hw, as"
	@echo "             netdev's CI runs them (IPv4 and IPv6), upstream vs series; hours, not in make test"
	@echo "ARCH=armv7   bench, e2e, selftests in the ARMv7 guest (virt, 32-bit, non-coherent DMA);"
	@echo "             make arm-bench, arm-e2e, arm-selftests are the same with ARCH=armv7"
	@echo "make board   a real board over ssh: DUT=root@board PEER=root@peer NETIF=eth1 [PEER_IF=]"
	@echo "             [KDIR=|KCONFIG=] [MODULES=upstream,series] [REPS=5]: selftests, A/B bench (docs/board.md)"

setup:
	@bash lab/setup.sh

tree: setup
	@$(if $(STACK),STACK=$(STACK)) bash lab/series/tree.sh

export:
	@$(if $(STACK),STACK=$(STACK)) $(if $(CHAIN),CHAIN="$(CHAIN)") $(if $(SIGNOFF),SIGNOFF=$(SIGNOFF)) bash lab/series/export.sh

check: setup
	@$(PY) lab/series/check.py $(if $(STACK),--stack $(STACK)) $(if $(PATCHES),--patches $(PATCHES)) $(if $(CHECKS),--checks $(CHECKS))

kernel: setup
	@bash lab/kernel/kbuild.sh kernel guest

qemu: setup
	@bash emulator/build.sh

unit: setup
	@$(PY) -m pytest -q tests

# the check and pytest side by side (lab/test.sh)
test: setup
	@PY="$(PY)" PYTEST_XDIST="$(PYTEST_XDIST)" bash lab/test.sh

# the bench in the guest of ARCH ($(1)); lab/bench/bench.py --help
# MODEL="rx-fifo-kib=12 peer-pause=1": properties of the emulated device
# for the run (bench.py and outage.py --model)
MODEL_ARGS = $(foreach m,$(MODEL),--model $(m))
BENCH = $(PY) lab/bench/bench.py --arch $(1) $(if $(FULL),--full) $(if $(REPS),--reps $(REPS)) $(if $(CELLS),--cells $(CELLS)) $(if $(MODULES),--modules $(MODULES)) $(MODEL_ARGS)
bench: setup
	@$(call BENCH,$(ARCH))

# Long soak on the debug kernel (KASAN, kmemleak, lockdep, DMA-API debug):
# too long for CI. Builds the debug kernel (~30-45 min cold) and the
# series' module for it, then makes SOAK_CHANGES (default 1000) live MTU
# and ring-size changes under bidirectional TCP traffic and checks for
# splats, leaked page_pool pages and kmemleak reports (lab/guest/soak.sh).
# ARCH=armv7: the ARMv7 guest on the armv7-debug kernel (armv7-virt's lock
# debugging and DMA-API debug, plus KASAN and kmemleak), with a frame
# pending at each change (LAN743X_SOAK_PENDING=1: the model drops LS on
# every SOAK_DROP_LS_EVERY-th frame, default 16), a progress line every
# 10 changes; hours under TCG (docs/arm.md). SOAK_KERNEL=armv7-virt: on the
# ARM guest's own kernel instead (lock debugging and DMA-API debug, no
# KASAN or kmemleak; shorter to build, faster to run).
SOAK_KERNEL ?= armv7-debug
SOAK_LOG = results/soak-$(ARCH)-$$(date +%Y%m%d-%H%M%S).log
soak: setup
ifeq ($(ARCH),armv7)
	@mkdir -p results && obj=$$(bash lab/kernel/kbuild.sh kernel $(SOAK_KERNEL) | tail -1) && \
	  ko=$$(bash lab/kernel/kbuild.sh module $(SOAK_KERNEL) series | tail -1) && \
	  qemu=$$(bash emulator/build.sh --arch arm | tail -1) && \
	  src=$$(bash lab/kernel/kbuild.sh srcrepo) && \
	  ARCH=armv7 QEMU=$$qemu KERNEL=$$obj \
	  DUT_OPTS=",fault-drop-ls-every=$${SOAK_DROP_LS_EVERY:-16}" \
	  LAN743X_KO=/ko/series/lan743x.ko LAN743X_SOAK_PENDING=1 LAN743X_SOAK_PROGRESS=$${SOAK_PROGRESS:-10} \
	  LAN743X_SOAK_CHANGES=$${SOAK_CHANGES:-1000} VM_TIMEOUT=$${SOAK_TIMEOUT:-43200} \
	  LAN743X_YNL=/ksrc/tools/net/ynl \
	  bash lab/vm/vm.sh --ko "series=$$ko" --dir "$$src/tools/net/ynl=/ksrc/tools/net/ynl" \
	  --dir "$$src/Documentation/netlink/specs=/ksrc/Documentation/netlink/specs" \
	  lab/guest/soak.sh | tee $(SOAK_LOG)
else
	@mkdir -p results && obj=$$(bash lab/kernel/kbuild.sh kernel debug) && \
	  ko=$$(bash lab/kernel/kbuild.sh module debug series) && \
	  KERNEL=$$obj/arch/x86/boot/bzImage MODDIR=$$obj/mods VM_MEM=4G \
	  LAN743X_SOAK_CHANGES=$${SOAK_CHANGES:-1000} \
	  LAN743X_YNL=$$(bash lab/kernel/kbuild.sh srcrepo)/tools/net/ynl VM_TIMEOUT=14400 \
	  bash lab/vm/vm.sh lab/guest/soak.sh "$$ko" | tee $(SOAK_LOG)
endif

# Outage of live MTU changes, upstream vs the series (lab/bench/outage.py).
outage: setup
	@$(PY) lab/bench/outage.py $(if $(MODULES),--modules $(MODULES)) $(if $(REPS),--reps $(REPS)) $(if $(PLAN),--plan $(PLAN)) $(MODEL_ARGS)

# The link partner outside the DUT's guest (a host tap device in a network
# namespace, lab/vm/partner.sh): its rate on the model's wire meter and
# the share of a host core it used, TCP and a 1 Gbit/s UDP burst
# (lab/bench/partner.py).
partner: setup
	@$(PY) lab/bench/partner.py $(if $(MODULES),--modules $(MODULES)) $(if $(REPS),--reps $(REPS)) $(if $(ICOUNT),--icount $(ICOUNT)) $(MODEL_ARGS)

# The live changes under a line-rate stream from the partner on the host
# tap (lab/bench/lineout.py): per change, the frames the device dropped
# with the receiver closed and in all, against a command that changes
# nothing, upstream vs series, in model time (icount).
lineout: setup
	@$(PY) lab/bench/lineout.py $(if $(MODULES),--modules $(MODULES)) $(if $(REPS),--reps $(REPS)) $(if $(PLAN),--plans $(PLAN)) $(if $(ICOUNT),--icount $(ICOUNT)) $(MODEL_ARGS)

# The model's unknowns swept (lab/bench/sweep.py): make bench's TCP RX
# cells at 1500 and 9000 and make outage, upstream vs series, at each
# corner (one factor at a time from the model's defaults; FACTORIAL=1:
# every combination), then the report (results/sweep-<time>/sweep.md).
# ARCH=armv7: the bench cells only. SCOPED=1: at a one-factor corner only
# the bench cells or the outage, whichever that factor acts on (half the
# time); CORNERS=a,b: only those corners. Hours: not CI.
SWEEP = $(PY) lab/bench/sweep.py run --arch $(1) $(if $(REPS),--reps $(REPS)) $(if $(FACTORIAL),--factorial) $(if $(SCOPED),--scoped) $(if $(CORNERS),--corners $(CORNERS)) $(if $(OUT),--out $(OUT))
sweep: setup
	@$(call SWEEP,$(ARCH))

# The guest e2e (lab/guest/e2e.sh) with the upstream and the series'
# module, one boot each (lab/vm/e2e.sh); ARCH=armv7: qemu-system-arm, the
# armv7-virt kernel, a Debian armhf initramfs, and the DMA cache
# maintenance counts. tests/test_vm.py runs the x86_64 e2e in make test,
# tests/test_vm_arm.py the ARM one with LAN743X_ARM=1.
E2E = $(if $(STACK),STACK=$(STACK)) ARCH=$(1) bash lab/vm/e2e.sh
e2e: setup
	@$(call E2E,$(ARCH))

# The lan743x kselftests, our hw tests and the kernel's generic driver
# tests in the guest, upstream vs the series' module, both remote modes,
# compared with lab/selftests/expected/STACK.txt (armv7: plus the ARM
# differences of net-next-2-armv7.txt). make test runs the x86_64 ones.
SELFTESTS = $(PY) lab/selftests/selftests.py --arch $(1) $(if $(MODULES),--modules "$(MODULES)")
selftests: setup
	@$(call SELFTESTS,$(ARCH))

# The whole driver test targets (drivers/net, drivers/net/hw, with net/lib)
# as netdev's CI runs them: make install, then run_kselftest.sh -t for
# each file (LAN743X_KSFT_TIMEOUT, default 300 s each) with a net.config
# of IPv4 and IPv6 on both ends, the peer in a network namespace; results
# per file and per case against lab/selftests/expected/STACK-ksft.txt
# (docs/selftests.md). Hours under TCG: not part of make test, which runs
# the subset of make selftests. FILES="COLLECTION:FILE ...": only those.
ksft: setup
	@$(PY) lab/selftests/selftests.py --whole $(if $(MODULES),--modules "$(MODULES)") $(if $(FILES),--files "$(FILES)")

# the ARMv7 guest's targets by their names
arm-e2e: setup
	@$(call E2E,armv7)
arm-bench: setup
	@$(call BENCH,armv7)
arm-selftests: setup
	@$(call SELFTESTS,armv7)

# A real board (i.MX6 + LAN7430) and its link partner, reached over ssh
# (lab/board/board.py, docs/board.md): builds the upstream and the series'
# module for the board's kernel tree (KDIR, or KCONFIG + SRC), runs the
# selftests and the A/B bench there, writes results/board-<time>/. ARCH is
# the board's (armv7 unless given on the command line).
BOARD_ARCH = $(if $(filter command line environment,$(origin ARCH)),$(ARCH),armv7)
board:
	@$(PY) lab/board/board.py --arch $(BOARD_ARCH) $(if $(DUT),--dut $(DUT)) $(if $(PEER),--peer $(PEER)) \
	  $(if $(NETIF),--netif $(NETIF)) $(if $(PEER_IF),--peer-if $(PEER_IF)) $(if $(MODULES),--modules $(MODULES)) \
	  $(if $(KDIR),--kdir $(KDIR)) $(if $(KCONFIG),--kconfig $(KCONFIG)) $(if $(SRC),--src $(SRC)) \
	  $(if $(REPS),--reps $(REPS)) $(if $(OUT),--out $(OUT)) $(BOARD_ARGS)
