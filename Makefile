# spinnic: a thin wrapper over meson (DESIGN §9).
#   make deps   install what the project needs (Debian 12, root) and reserve hugepages
#   make build  configure and build into $(BUILD)
#   make demo   two virtual nodes, a vector datatype unpacked by the NIC, verified
#   make test   every test (unit, tools, integration) but suite mpi
#   make openmpi Open MPI 4.1.4 with its Portals 4 components over libspinnic,
#               built once into ~/.cache/spinnic (tools/openmpi-build.sh)
#   make test-mpi  suite mpi: MPI programs over that build (77 without it)
#   make test-ports  suite ports: collectives over af_xdp (root), outside make test
#   make bench  spinnic-bench tables, CSV and plots into bench-out/
#   make fuzz   libFuzzer targets (clang, ASan+UBSan), FUZZ_SECONDS each
BUILD    ?= build
SANITIZE ?= 0
MESON_OPTS ?=
ifeq ($(SANITIZE),1)
BUILD := $(BUILD)-asan
MESON_OPTS += -Db_sanitize=address,undefined -Db_lundef=false
endif

PKGS = build-essential pkg-config meson ninja-build libdpdk-dev dpdk \
       liburing-dev libbpf-dev libxdp-dev libcmocka-dev rdma-core \
       libibverbs-dev libnuma-dev libpcap-dev libmpich-dev mpich gnuplot-nox \
       clang llvm tshark bpftool jq iputils-ping dpdk-dev libssl-dev
HUGEPAGES ?= 512
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60

.PHONY: all deps hugepages build demo test test-mpi test-ports openmpi bench clean fuzz

all: build

deps:
	@missing=$$(for p in $(PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: need root to apt-get install:$$missing" >&2; exit 1; fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
	@$(MAKE) --no-print-directory hugepages

# Best effort: spinnic and the clients fall back to ordinary pages without them.
hugepages:
	@if [ "$$(id -u)" = 0 ] && [ -w /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages ]; then \
		cur=$$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages); \
		[ "$$cur" -ge $(HUGEPAGES) ] || echo $(HUGEPAGES) > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages || true; \
		mountpoint -q /dev/hugepages || { mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages; } || true; \
	fi; \
	echo "hugepages: $$(grep HugePages_Free /proc/meminfo | awk '{print $$2}') free (2 MiB)"

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_OPTS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

demo: build
	./tools/demo.sh $(BUILD)

test: build
	meson test -C $(BUILD) --print-errorlogs --num-processes 2 --no-suite mpi --no-suite ports

test-ports: build
	meson test -C $(BUILD) --print-errorlogs --suite ports

openmpi: build
	./tools/openmpi-build.sh $(BUILD)

test-mpi: build
	meson test -C $(BUILD) --print-errorlogs --suite mpi

bench: build
	./tools/bench.sh $(BUILD) bench-out

fuzz: deps
	./test/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(BUILD)-asan bench-out $(FUZZ_BUILD) $(FUZZ_BUILD).setup.log
