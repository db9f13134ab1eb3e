# testflame - one top-level, non-recursive Makefile.
#
#   make            build build/testflame
#   make test       install what is missing (make deps), build, check the
#                   source's floors (make check-layers), run every test
#   make check-layers  no #include climbs a floor or closes a cycle between
#                   folders (docs/architecture.md)
#   make demo       profile the bundled example project's test suite
#   make deps       install the Debian packages the build and the tests need
#   make asan       unit tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make fuzz       build the libFuzzer targets (tests/fuzz) and run each for
#                   FUZZ_SECONDS (default 10); FUZZ_TARGETS= picks some
#   make install    PREFIX=/usr/local DESTDIR= (bin, man pages, completions,
#                   share/testflame); make uninstall removes what it installed
#   make man        the manual pages (build/man), from the option tables
#   make completion the bash and zsh completions (build/completion)
#   make deb        build/testflame_VERSION_ARCH.deb (packaging/deb.sh)
#   make dist       build/testflame-VERSION.tar.gz, a source tarball that
#                   builds with `make` alone
#   make clean
#
# V=1 shows the commands. BUILD=dir builds elsewhere (make asan uses build/asan).

BUILD   ?= build
PREFIX  ?= /usr/local
DESTDIR ?=
V       ?= 0

ifeq ($(V),1)
Q :=
else
Q := @
endif

# libcurl: headers only; src/net/http.c opens libcurl.so.4 when it is
# first needed, so the other commands don't pay its start-up
# libgit2: opened on first use too (include/testflame/git.h), by the
# SONAME of the library pkg-config finds; only the unit tests, which call
# it directly, link it
PKGS := libdw libelf libprotobuf-c zlib yaml-0.1 jansson
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) libgit2 libcurl 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
GIT_LIBS   = $(shell pkg-config --libs libgit2 2>/dev/null)
LIBGIT2_SONAME = $(shell objdump -p "$$(pkg-config --variable=libdir libgit2)/libgit2.so" 2>/dev/null | \
	sed -n 's/^ *SONAME *//p')

OPT      ?= -O2
CFLAGS   ?= $(OPT) -g
TF_FLAGS := -std=c11 -D_GNU_SOURCE -fno-omit-frame-pointer -Iinclude -Isrc -I$(BUILD)/gen
WARN     := -Wall -Wextra -Werror
LDLIBS   = $(PKG_LIBS) -liberty -lpthread -lm -ldl

ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
CFLAGS   += $(SANFLAGS)
LDFLAGS  += $(SANFLAGS)
endif
# The fuzzing build (make fuzz-build sets it, into build/fuzz): clang, the
# library instrumented for libFuzzer's coverage, ASan and UBSan.
FUZZ_CC  ?= clang
ifeq ($(SAN),fuzz)
CC       := $(FUZZ_CC)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
CFLAGS   += $(SANFLAGS) -fsanitize=fuzzer-no-link
LDFLAGS  += $(SANFLAGS)
endif

# Debian packages: to build, and (on top) to run the tests against real tools
# (rsync for gitlab-ci-local, python3-yaml for the CI config tests, protoc
# and Go's protobuf and pprof packages for the loopback Pyroscope; pytest's
# xdist, python3-venv and cargo for the suites run every way users run them).
DEB_BUILD := build-essential pkg-config libgit2-dev libprotobuf-c-dev protobuf-c-compiler \
	zlib1g-dev libcurl4-openssl-dev libyaml-dev libdw-dev libelf-dev libjansson-dev \
	libiberty-dev libcmocka-dev
DEB_TEST  := git cmake golang-go googletest libgtest-dev check linux-perf \
	python3 python3-pytest python3-pytest-xdist python3-venv python3-exceptiongroup python3-tomli python3-yaml \
	libseccomp-dev valgrind libxml2-utils hyperfine cargo \
	chromium lighttpd openssl curl rsync procps file elfutils libc6-dbg libcriterion-dev time \
	catch2 doctest-dev libboost-test-dev meson ninja-build \
	protobuf-compiler golang-google-protobuf-dev golang-github-google-pprof-dev \
	clang libclang-rt-14-dev gdb zsh man-db lintian
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

SRCS      := $(wildcard src/*/*.c)
CLI_SRCS  := $(filter src/cli/%,$(SRCS))
LIB_SRCS  := $(filter-out src/cli/%,$(SRCS))
# protobuf-c code generated from our .proto files: pprof's profile.proto
# (the codec) and Pyroscope's push and query messages (the Pyroscope store).
GEN_C     := $(BUILD)/gen/profile.pb-c.c $(BUILD)/gen/pyroscope.pb-c.c
GEN_H     := $(GEN_C:.c=.h)
# Kept once made: as intermediate files of the pattern rules, make would
# delete the headers after the build, and the next make (test-only after
# test's build) would run protoc-c again and rebuild the library, the
# binary and everything linked with it.
.SECONDARY: $(GEN_C) $(GEN_H)
# The report page's script, style and skeleton, embedded as C arrays.
ASSETS    := src/report/assets/report.js src/report/assets/report.css src/report/assets/report.html
GEN_ASSETS := $(BUILD)/gen/report_assets.c
# The helpers handed to test runners (the pytest plugin and the Python
# loader that brings it), embedded verbatim.
RUNNER_ASSETS := contrib/pytest_testflame.py contrib/testflame_markers.py \
	src/attribute/sitecustomize.py \
	src/attribute/testflame_loader.py
GEN_RUNNER_ASSETS := $(BUILD)/gen/runner_assets.c
# The commit the binary is built from (packaging/version.sh; rewritten only
# when it changes, so a new commit recompiles one file).
GEN_VERSION := $(BUILD)/gen/version.c
# The allocation sampler (SPEC §10): a library testflame preloads into the
# command's processes, built apart (no testflame code, no sanitizer), put
# beside the binary and embedded in it; execcheck.c is in both. Its code
# and read-only data share one segment (noseparate-code): every process of
# the suite maps it, and each segment is a mapping and a page fault more.
PRELOAD_SRCS := src/record/preload/tfalloc.c src/record/preload/execcheck.c
PRELOAD   := $(BUILD)/libtestflame-alloc.so
PRELOAD_FLAGS := -std=gnu11 -D_GNU_SOURCE -O2 -fPIC -shared -fvisibility=hidden \
	-fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-builtin -ftls-model=initial-exec \
	-Wl,-z,nodelete -Wl,-z,noseparate-code -Wl,-soname,libtestflame-alloc.so
LIB_OBJS  := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(GEN_C:.c=.o) $(BUILD)/gen/report_assets.o \
	$(BUILD)/gen/runner_assets.o $(BUILD)/gen/version.o $(BUILD)/gen/alloc_preload.o \
	$(BUILD)/src/record/preload/execcheck.o
ifeq ($(SAN),fuzz)
# The fuzz targets link what parses and publishes, never the store, the
# history, the runs or the attributor: the fuzzing build's library leaves
# out what none of them links (some 40% of its compiling, which make test
# waits for). A target that comes to need one fails to link, naming it:
# take it off these lists.
FUZZ_SKIP_DIRS := store history run doctor
FUZZ_SKIP_SRCS := attribute/attributor.c attribute/build.c attribute/inject.c \
	attribute/libtest.c attribute/memory.c attribute/meson.c attribute/offcpu.c \
	attribute/select.c attribute/suite.c base/version.c compare/history.c \
	context/context.c context/worktree.c profile/aggregate.c profile/top.c \
	publish/files.c publish/hook.c report/github.c report/history.c report/show.c
LIB_OBJS  := $(filter-out $(FUZZ_SKIP_DIRS:%=$(BUILD)/src/%/%) $(FUZZ_SKIP_SRCS:%.c=$(BUILD)/src/%.o) \
	$(BUILD)/gen/pyroscope.pb-c.o $(BUILD)/gen/runner_assets.o $(BUILD)/gen/version.o,$(LIB_OBJS))
endif
CLI_OBJS  := $(CLI_SRCS:%.c=$(BUILD)/%.o)
LIB       := $(BUILD)/libtestflame.a
BIN       := $(BUILD)/testflame

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)

# Workloads the end-to-end tests profile: small C programs with known hot
# functions. *_nofp.c are built without frame pointers (DWARF unwinding).
# *.cc are C++ (g++, same flags); symbolize_nopie is symbolize.c linked as a
# position-dependent executable, for the symbolizer's non-PIE case, and
# symbolize_dbgframe keeps its CFI in .debug_frame only.
#
# C++ frameworks' test binaries (tests/e2e/t0928), where the framework is
# installed (make deps installs them all)
CXXFORMS := tests/fixtures/suites/cxxforms
CXXFORMS_BINS := \
	$(if $(wildcard /usr/include/catch2/catch.hpp),$(if $(wildcard /usr/lib/libCatch2WithMain.a),$(BUILD)/fixtures/cxxforms/catch2_tests)) \
	$(if $(wildcard /usr/include/doctest/doctest.h),$(BUILD)/fixtures/cxxforms/doctest_tests) \
	$(if $(wildcard /usr/include/boost/test/unit_test.hpp),$(BUILD)/fixtures/cxxforms/boost_tests)
CXXFORMS_CXX = $(CXX) -g -O0 -fno-omit-frame-pointer
FIXTURE_SRCS := $(wildcard tests/fixtures/*.c)
FIXTURE_CXX_SRCS := $(wildcard tests/fixtures/*.cc)
FIXTURE_BINS := $(FIXTURE_SRCS:tests/fixtures/%.c=$(BUILD)/fixtures/%) \
	$(FIXTURE_CXX_SRCS:tests/fixtures/%.cc=$(BUILD)/fixtures/%) \
	$(BUILD)/fixtures/symbolize_nopie $(BUILD)/fixtures/symbolize_dbgframe \
	$(CXXFORMS_BINS)

# Benchmark helpers (bench/*.c, linked with the library); see BENCHMARKS.md.
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

# Test drivers: small programs over libtestflame that end-to-end tests use
# to reach engine calls no command exposes yet.
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tools/%)

# Fuzz targets (tests/fuzz/README.md): tests/fuzz/NAME.c is a libFuzzer
# target over the library, built into $(FUZZ_DIR)/NAME; tests/fuzz/NAME/
# holds its seeds and the inputs of crashes fixed, tests/fuzz/NAME.dict
# its dictionary when the format has one.
FUZZ_DIR     ?= $(BUILD)/fuzz
FUZZ_SECONDS ?= 10
FUZZ_TARGETS ?=
FUZZ_SRCS    := $(wildcard tests/fuzz/*.c)
FUZZ_BINS    := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/%)

.PHONY: FORCE all man completion uninstall runtime-libs deb dist install-chroot image test test-only check-layers unit fixtures \
	bench bench-check demo deps deps-build asan fuzz fuzz-build fuzz-targets install clean
.DEFAULT_GOAL := all

all: $(BIN) $(PRELOAD)

$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: src/profile/%.proto
	@mkdir -p $(BUILD)/gen
	@echo "  PROTOC  $<"
	$(Q)protoc-c --c_out=$(BUILD)/gen --proto_path=src/profile $<

$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: src/store/%.proto
	@mkdir -p $(BUILD)/gen
	@echo "  PROTOC  $<"
	$(Q)protoc-c --c_out=$(BUILD)/gen --proto_path=src/store $<

$(BUILD)/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(TF_FLAGS) $(PKG_CFLAGS) -w -c $< -o $@

$(GEN_ASSETS): $(ASSETS) src/report/assets/embed.sh
	@mkdir -p $(BUILD)/gen
	@echo "  EMBED   $(ASSETS)"
	$(Q)sh src/report/assets/embed.sh $(ASSETS) > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/report_assets.o: $(GEN_ASSETS)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(GEN_RUNNER_ASSETS): $(RUNNER_ASSETS) src/attribute/embed.sh
	@mkdir -p $(BUILD)/gen
	@echo "  EMBED   $(RUNNER_ASSETS)"
	$(Q)sh src/attribute/embed.sh $(RUNNER_ASSETS) > $@.tmp && mv $@.tmp $@

$(GEN_VERSION): FORCE
	@mkdir -p $(BUILD)/gen
	$(Q)sh packaging/version.sh $@

$(BUILD)/gen/version.o: $(GEN_VERSION)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

FORCE:

$(BUILD)/gen/runner_assets.o: $(GEN_RUNNER_ASSETS)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(PRELOAD): $(PRELOAD_SRCS) $(wildcard src/record/preload/*.h) Makefile
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(PRELOAD_FLAGS) $(WARN) -o $@.tmp $(PRELOAD_SRCS) -ldl -pthread
	@# stripped here, not when packaged: the copy installed beside testflame
	@# is used only when it is byte for byte the one embedded in it
	$(Q)strip --strip-unneeded --remove-section=.comment --remove-section=.note $@.tmp && mv $@.tmp $@

$(BUILD)/gen/alloc_preload.c: $(PRELOAD) src/record/preload/embed.sh
	@mkdir -p $(BUILD)/gen
	@echo "  EMBED   $(PRELOAD)"
	$(Q)sh src/record/preload/embed.sh tf_alloc_preload $(PRELOAD) > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/alloc_preload.o: $(BUILD)/gen/alloc_preload.c
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/src/git/git.o: TF_FLAGS += -DTF_LIBGIT2_SONAME='"$(or $(LIBGIT2_SONAME),libgit2.so)"'

$(BUILD)/src/%.o: src/%.c | $(GEN_H)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(TF_FLAGS) $(WARN) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN): $(CLI_OBJS) $(LIB)
	@echo "  LINK    $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB) tests/unit/unit.h
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(TF_FLAGS) $(WARN) $(PKG_CFLAGS) -MMD -MP -o $@ $< $(LIB) $(LDLIBS) $(GIT_LIBS) -lcmocka $(LDFLAGS)

$(BUILD)/tools/%: tests/tools/%.c $(LIB)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(TF_FLAGS) $(WARN) $(PKG_CFLAGS) -MMD -MP -o $@ $< $(LIB) $(LDLIBS) $(LDFLAGS)

$(BUILD)/fixtures/%_nofp: tests/fixtures/%_nofp.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -pthread -o $@ $<

# symbolize_nofp.c again, with its unwind tables in .debug_frame only
$(BUILD)/fixtures/symbolize_dbgframe: tests/fixtures/symbolize_nofp.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables -o $@ $<

$(BUILD)/fixtures/%_nopie: tests/fixtures/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -fno-omit-frame-pointer -fno-inline -pthread -no-pie -o $@ $<

$(BUILD)/fixtures/%: tests/fixtures/%.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -g -fno-omit-frame-pointer -fno-inline -pthread -o $@ $<

$(BUILD)/fixtures/%: tests/fixtures/%.cc
	@mkdir -p $(dir $@)
	$(Q)$(CXX) -O1 -g -fno-omit-frame-pointer -fno-inline -pthread -o $@ $<

$(BUILD)/fixtures/cxxforms/catch2_tests: $(CXXFORMS)/catch2_a.cpp $(CXXFORMS)/catch2_b.cpp $(CXXFORMS)/spin.h
	@mkdir -p $(dir $@)
	$(Q)$(CXXFORMS_CXX) -o $@ $(CXXFORMS)/catch2_a.cpp $(CXXFORMS)/catch2_b.cpp /usr/lib/libCatch2WithMain.a

$(BUILD)/fixtures/cxxforms/doctest_tests: $(CXXFORMS)/doctest_main.cpp $(CXXFORMS)/doctest_tests.cpp $(CXXFORMS)/spin.h
	@mkdir -p $(dir $@)
	$(Q)$(CXXFORMS_CXX) -o $@ $(CXXFORMS)/doctest_main.cpp $(CXXFORMS)/doctest_tests.cpp

$(BUILD)/fixtures/cxxforms/boost_tests: $(CXXFORMS)/boost_tests.cpp $(CXXFORMS)/spin.h
	@mkdir -p $(dir $@)
	$(Q)$(CXXFORMS_CXX) -o $@ $(CXXFORMS)/boost_tests.cpp -lboost_unit_test_framework

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(TF_FLAGS) $(WARN) $(PKG_CFLAGS) -MMD -MP -o $@ $< $(LIB) $(LDLIBS) $(LDFLAGS)

# (with BUILD=$(FUZZ_DIR) SAN=fuzz, from fuzz-build)
$(FUZZ_BINS): $(BUILD)/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(LIB)
	@echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) $(TF_FLAGS) $(WARN) $(PKG_CFLAGS) -fsanitize=fuzzer -MMD -MP -o $@ $< \
	  $(LIB) $(LDLIBS) $(LDFLAGS)

# The loopback Pyroscope of the end-to-end tests (tests/pyroscope/): Go
# over Debian's google.golang.org/protobuf and google/pprof sources, its
# messages generated from src/store/pyroscope.proto with protoc and a
# protoc-gen-go built from those sources. Where they are missing (no `make
# deps`), it is not built and the tests that need it skip, saying why.
GOCODE      := /usr/share/gocode
PYRO_DIR    := $(BUILD)/pyroscope-server
PYRO_SERVER := $(BUILD)/tools/pyroscope-server
PYRO_GO     = cd $(PYRO_DIR) && GO111MODULE=off GOFLAGS= GOPATH=$(abspath $(PYRO_DIR)):$(GOCODE) go
HAVE_PYRO_GO := $(shell command -v go >/dev/null && command -v protoc >/dev/null && \
	test -d $(GOCODE)/src/google.golang.org/protobuf/cmd/protoc-gen-go && \
	test -d $(GOCODE)/src/github.com/google/pprof/profile && echo yes)

$(PYRO_SERVER): tests/pyroscope/server.go src/store/pyroscope.proto
	@mkdir -p $(PYRO_DIR)/src/pyroserver $(dir $@)
	@echo "  GO      $@"
	$(Q)$(PYRO_GO) build -o bin/protoc-gen-go google.golang.org/protobuf/cmd/protoc-gen-go
	$(Q)protoc --plugin=protoc-gen-go=$(PYRO_DIR)/bin/protoc-gen-go --proto_path=src/store \
	  --go_out=$(PYRO_DIR)/src/pyroserver --go_opt=paths=source_relative \
	  --go_opt='Mpyroscope.proto=testflame/pyroserver;main' src/store/pyroscope.proto
	$(Q)cp tests/pyroscope/server.go $(PYRO_DIR)/src/pyroserver/
	$(Q)$(PYRO_GO) build -o $(abspath $@) ./src/pyroserver

unit: $(UNIT_BINS)
fixtures: $(FIXTURE_BINS) $(TOOL_BINS) $(if $(HAVE_PYRO_GO),$(PYRO_SERVER))
bench: $(BIN) $(BENCH_BINS)

# the quick form of every benchmark, failing when a ratio misses its goal
# (bench/check.sh; minutes, by hand: not part of make test)
bench-check: all bench
	bench/check.sh

deps-build:
	@ok=" $$(dpkg-query -W -f='$${Package} $${Status}\n' $(DEB_BUILD) 2>/dev/null | \
	  awk '/ ok installed$$/ { printf "%s ", $$1 }')"; missing=""; \
	for p in $(DEB_BUILD); do case "$$ok" in *" $$p "*) ;; *) missing="$$missing $$p";; esac; done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  $(SUDO) apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

deps: deps-build
	@ok=" $$(dpkg-query -W -f='$${Package} $${Status}\n' $(DEB_TEST) 2>/dev/null | \
	  awk '/ ok installed$$/ { printf "%s ", $$1 }')"; missing=""; \
	for p in $(DEB_TEST); do case "$$ok" in *" $$p "*) ;; *) missing="$$missing $$p";; esac; done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  $(SUDO) apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi
	@# Node.js may come from elsewhere with its own npm (Debian's npm would
	@# conflict with it): install Debian's only when the commands are missing
	@command -v npm >/dev/null 2>&1 || { echo "make deps: installing nodejs npm"; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm; }
	@tests/node/install.sh

# The build takes every core (JOBS); the tests run one at a time, since
# many of them judge timings that a neighbour would move.
JOBS ?= $(shell nproc 2>/dev/null || echo 1)

test: deps
	$(Q)$(MAKE) --no-print-directory -j$(JOBS) all unit fixtures bench fuzz-build
	$(Q)$(MAKE) --no-print-directory test-only

test-only: all unit fixtures bench fuzz-build
	$(Q)tests/check-layers.sh
	$(Q)tests/run.sh $(BUILD)

# The source's floors (SPEC §12): base -> record, profile, symbolize ->
# context, attribute -> compare, store -> history -> report -> publish -> run -> cli.
check-layers:
	$(Q)tests/check-layers.sh

demo: deps-build
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory -C examples BUILD=build clean all >/dev/null
	$(BIN) record -o $(BUILD)/demo/run.pb.gz --test examples -- $(MAKE) --no-print-directory -C examples BUILD=build check
	$(BIN) show $(BUILD)/demo/run.pb.gz
	$(BIN) view --format text --top 15 $(BUILD)/demo/run.pb.gz

asan: deps-build
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/asan SAN=1 OPT=-O1 unit fixtures
	$(Q)ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  tests/run.sh $(BUILD)/asan unit

fuzz-build: deps-build
	@command -v $(FUZZ_CC) >/dev/null || { echo "make fuzz: no $(FUZZ_CC) (make deps installs clang)"; exit 1; }
	$(Q)$(MAKE) --no-print-directory BUILD=$(FUZZ_DIR) SAN=fuzz OPT=-O1 fuzz-targets

fuzz-targets: $(FUZZ_BINS)

# Long runs by hand: nice -n 19 make fuzz FUZZ_SECONDS=3600 FUZZ_TARGETS=pprof
fuzz: fuzz-build
	$(Q)tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The manual: a page per command, testflame(1) and testflame.yml(5), each
# written by the binary from the option tables that print --help
# (src/cli/manual.c); the config's page ends with docs/config.md's example.
MAN_OUT  := $(BUILD)/man
COMP_OUT := $(BUILD)/completion
man: $(MAN_OUT)/.stamp
completion: $(COMP_OUT)/testflame.bash $(COMP_OUT)/_testflame

$(MAN_OUT)/.stamp: $(BIN) docs/config.md packaging/man-example.sh
	@echo "  MAN     $(MAN_OUT)"
	$(Q)rm -rf $(MAN_OUT) && mkdir -p $(MAN_OUT) && \
	$(BIN) help --man >$(MAN_OUT)/testflame.1 && \
	for c in $$($(BIN) help --completion | sed -n 's/||cmd||.*//p'); do \
	  $(BIN) help --man $$c >$(MAN_OUT)/testflame-$$c.1 || exit 1; \
	done && \
	{ $(BIN) help --man testflame.yml && sh packaging/man-example.sh docs/config.md; } \
	  >$(MAN_OUT)/testflame.yml.5 && touch $@

# The completions: a template each, around the table of commands, flags
# and their values that the binary writes from the same option tables.
$(COMP_OUT)/testflame.bash: packaging/completion/testflame.bash.in $(BIN)
$(COMP_OUT)/_testflame: packaging/completion/_testflame.in $(BIN)
$(COMP_OUT)/testflame.bash $(COMP_OUT)/_testflame:
	@mkdir -p $(COMP_OUT)
	@echo "  COMPL   $@"
	$(Q)$(BIN) help --completion >$@.table && \
	sed -e '/^@TABLE@$$/{' -e 'r $@.table' -e 'd' -e '}' $< >$@.tmp && mv $@.tmp $@ && rm $@.table

# Where `make install` puts things (Debian's places with PREFIX=/usr
# ZSHCOMPDIR=/usr/share/zsh/vendor-completions, as make deb does).
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
DATADIR     ?= $(PREFIX)/share/testflame
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
# what CI jobs and test suites use besides the binary: the Action, the
# GitLab template, the CircleCI orb, the marker helpers
SHARE_DIRS  := actions gitlab circleci contrib

install: all man completion
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
	  $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(DATADIR)
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/testflame
	install -d $(DESTDIR)$(PREFIX)/lib/testflame
	install -m 644 $(PRELOAD) $(DESTDIR)$(PREFIX)/lib/testflame/libtestflame-alloc.so
	install -m 644 $(MAN_OUT)/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(MAN_OUT)/*.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 $(COMP_OUT)/testflame.bash $(DESTDIR)$(BASHCOMPDIR)/testflame
	install -m 644 $(COMP_OUT)/_testflame $(DESTDIR)$(ZSHCOMPDIR)/_testflame
	find $(SHARE_DIRS) -type f ! -name '*.o' | while read -r f; do \
	  install -D -m 644 "$$f" "$(DESTDIR)$(DATADIR)/$$f" || exit 1; \
	done

# make runtime-libs [BIN=FILE]: the shared libraries the binary needs at
# run time, one path a line: those it links, and libgit2, which it opens
# on first use (include/testflame/git.h), with those libgit2 links. The
# Action and the CircleCI orb copy them beside the binary they cache.
runtime-libs:
	@git2="$$(pkg-config --variable=libdir libgit2)/$(LIBGIT2_SONAME)"; \
	[ -n "$(LIBGIT2_SONAME)" ] && [ -e "$$git2" ] || { echo "make runtime-libs: no libgit2 (pkg-config libgit2)" >&2; exit 1; }; \
	{ ldd "$(BIN)" && ldd "$$git2"; } | awk '$$2 == "=>" && $$3 ~ /^\// { print $$3 }' | sort -u; \
	echo "$$git2"

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/testflame $(DESTDIR)$(MANDIR)/man1/testflame.1 \
	  $(DESTDIR)$(MANDIR)/man1/testflame-*.1 $(DESTDIR)$(MANDIR)/man5/testflame.yml.5 \
	  $(DESTDIR)$(BASHCOMPDIR)/testflame $(DESTDIR)$(ZSHCOMPDIR)/_testflame
	rm -rf $(DESTDIR)$(DATADIR) $(DESTDIR)$(PREFIX)/lib/testflame

# The Debian package and the source tarball (packaging/deb.sh, dist.sh).
deb: all man completion
	$(Q)sh packaging/deb.sh $(BUILD)

dist:
	$(Q)sh packaging/dist.sh $(BUILD)

# By hand, as root, minutes: the .deb on a debootstrapped Debian 12
# (install-chroot), and the container image built from it with podman and
# run: doctor, the example project, the GitLab template in gitlab-ci-local
# (image; figures for BENCHMARKS.md). Not part of make test.
install-chroot: deb
	tests/package/install-chroot.sh

image: deb
	tests/package/image.sh

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
