# flashprobe - infer SD/eMMC geometry by timing.  See README.md.
CC      ?= cc
CFLAGS  ?= -O2 -g
# Warnings are errors in `make check` (and so in CI), which sets
# WERROR=-Werror; a plain `make` or `make install` only warns, so a newer
# compiler's new warning does not stop a packager.
WERROR  ?=
CFLAGS  += -std=gnu11 -Wall -Wextra $(WERROR) -Wshadow -MMD -MP
LDLIBS  += -lm
PREFIX  ?= /usr/local
DESTDIR ?=
VERSION := 0.1.0
CPPFLAGS += -DFLASHPROBE_VERSION='"$(VERSION)"'

B := build
S := build/san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

LIB_SRCS  := $(filter-out flashprobe.c,$(wildcard *.c))
TEST_SRCS := $(wildcard tests/*.c)
LIB_OBJS  := $(LIB_SRCS:%.c=$(B)/%.o)
TEST_OBJS := $(TEST_SRCS:tests/%.c=$(B)/tests/%.o)
SAN_OBJS  := $(LIB_SRCS:%.c=$(S)/%.o) $(TEST_SRCS:tests/%.c=$(S)/tests/%.o)

CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell pkg-config --libs check 2>/dev/null)

all: $(B)/flashprobe flashprobe

# The flags the objects were built with: a change (make, then make check)
# rebuilds them.
FLAGS_LINE = $(subst ','\'',$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS))
$(B)/flags: FORCE | $(B)
	@echo '$(FLAGS_LINE)' | cmp -s - $@ || echo '$(FLAGS_LINE)' > $@

FORCE:

flashprobe: $(B)/flashprobe
	cp $< $@

$(B)/flashprobe: $(B)/flashprobe.o $(LIB_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/%.o: %.c $(B)/flags | $(B)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(B)/tests/%.o: tests/%.c $(B)/flags | $(B)/tests check-lib
	$(CC) $(CPPFLAGS) $(CFLAGS) -I. $(CHECK_CFLAGS) -c $< -o $@

$(B)/check_flashprobe: $(LIB_OBJS) $(TEST_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

# The same suite under AddressSanitizer and UndefinedBehaviorSanitizer.
$(S)/%.o: %.c $(B)/flags | $(S)/tests
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(S)/tests/%.o: tests/%.c $(B)/flags | $(S)/tests check-lib
	$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS) -I. $(CHECK_CFLAGS) -c $< -o $@

$(S)/check_flashprobe: $(SAN_OBJS)
	$(CC) $(CFLAGS) $(SAN_FLAGS) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

$(S)/flashprobe: $(S)/flashprobe.o $(filter-out $(S)/tests/%,$(SAN_OBJS))
	$(CC) $(CFLAGS) $(SAN_FLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B) $(B)/tests $(S)/tests:
	mkdir -p $@

# Says what is missing for the tests and how to get it; installs nothing
# (that is `make deps`, as root, or .ci/run).
check-lib:
	@sh tests/deps.sh check

# The compiler, libcheck and the tools the tests use, with apt-get.
deps:
	sh tests/deps.sh install

# Plain run first, then the sanitizer run; each runs every suite in a
# process of its own (Check's summary line after each) and ends on a line
# "N passed, N failed, N skipped".  Warnings are errors.
# The sanitizer run takes every 8th case of the sweeps that repeat one path
# over every card, geometry or kill point (tests/tests.h): the plain run
# takes them all.  The realtime suite (cards served in real time) runs in
# the plain run only.
# The two builds use every core (about 4 of make check's minutes built one
# file at a time), and so do the tests: as many suites at once as there
# are cores (CHECK_JOBS), each printed whole when it ends, then the
# realtime suite alone.
JOBS := $(shell nproc 2>/dev/null || echo 2)
check:
	@$(MAKE) --no-print-directory -j$(JOBS) WERROR=-Werror check-run

# The realtime suite serves a simulated card through FUSE (bench/simfuse):
# built when libfuse3-dev is there, else that suite is skipped loudly.
HAVE_FUSE := $(shell pkg-config --exists fuse3 2>/dev/null && echo y)
SIMFUSE := $(if $(HAVE_FUSE),$(B)/simfuse $(B)/indepcard)

check-run: check-lib $(B)/flashprobe $(B)/check_flashprobe $(S)/flashprobe $(S)/check_flashprobe $(SIMFUSE)
	@echo "== test suite =="
	CHECK_JOBS=$(JOBS) FLASHPROBE_BIN=$(CURDIR)/$(B)/flashprobe \
	    FLASHPROBE_SIMFUSE=$(CURDIR)/$(B)/simfuse ./$(B)/check_flashprobe
	@echo "== test suite under ASan+UBSan =="
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	    CHECK_JOBS=$(JOBS) FLASHPROBE_BIN=$(CURDIR)/$(S)/flashprobe \
	    FLASHPROBE_SIMFUSE=$(CURDIR)/$(B)/simfuse ./$(S)/check_flashprobe

# The partition suite over every generated geometry, not a sample (minutes),
# the write-based AU search on 4000 generated cards, and writing tests
# stopped at 150 random moments per target, then restored (killsweep;
# FLASHPROBE_SWEEP_SEED=N repeats a run's moments).
check-long: check-lib $(B)/flashprobe $(B)/check_flashprobe
	FLASHPROBE_LONG=1 CK_RUN_SUITE=partition FLASHPROBE_BIN=$(CURDIR)/$(B)/flashprobe \
	    ./$(B)/check_flashprobe
	FLASHPROBE_LONG=1 CK_RUN_SUITE=auwrite FLASHPROBE_BIN=$(CURDIR)/$(B)/flashprobe \
	    ./$(B)/check_flashprobe
	FLASHPROBE_LONG=1 CK_RUN_SUITE=align CK_RUN_CASE=generated \
	    FLASHPROBE_BIN=$(CURDIR)/$(B)/flashprobe ./$(B)/check_flashprobe
	FLASHPROBE_LONG=1 CK_RUN_SUITE=killsweep FLASHPROBE_BIN=$(CURDIR)/$(B)/flashprobe \
	    ./$(B)/check_flashprobe

# bench/simfuse: a simulated card as a FUSE file that answers in real time
# (bench/realtime puts a loop device over it); needs libfuse3-dev.
FUSE_CFLAGS = $(shell pkg-config --cflags fuse3 2>/dev/null)
FUSE_LIBS   = $(shell pkg-config --libs fuse3 2>/dev/null)
$(B)/simfuse: bench/simfuse.c $(LIB_OBJS)
	@test -n "$(HAVE_FUSE)" || { echo "bench/simfuse needs libfuse3-dev and fuse3 (apt-get install libfuse3-dev fuse3)"; exit 1; }
	$(CC) $(CPPFLAGS) $(CFLAGS) -I. $(FUSE_CFLAGS) -o $@ $< $(LIB_OBJS) $(FUSE_LIBS) $(LDLIBS)

# bench/indepcard: a card model written apart from sim.c (bench/indep-align,
# bench/indep-capacity, bench/indep-openau, bench/indep-ausearch)
$(B)/indepcard: bench/indepcard.c | $(B)
	@test -n "$(HAVE_FUSE)" || { echo "bench/indepcard needs libfuse3-dev and fuse3 (apt-get install libfuse3-dev fuse3)"; exit 1; }
	$(CC) $(CPPFLAGS) $(CFLAGS) $(FUSE_CFLAGS) -o $@ $< $(FUSE_LIBS) -lm

demo: $(B)/flashprobe
	./$(B)/flashprobe probe sim:seed

# Figures and ratios, never pass/fail: cost of the analyzers against
# flashbench's procedures and of the capacity check against f3probe, and
# flashprobe's I/O overhead against fio; the stability of the verdicts,
# and the verdicts on simulated cards served in real time (bench/realtime)
# and on independently modelled ones (bench/indep-align, the capacity
# check's on their fakes: bench/indep-capacity, open-au's counts:
# bench/indep-openau, the write-based AU search's: bench/indep-ausearch).
bench: $(B)/flashprobe $(B)/check_flashprobe $(SIMFUSE)
	sh bench/align-cost $(CURDIR)/$(B)/flashprobe
	sh bench/write-cost $(CURDIR)/$(B)/flashprobe
	sh bench/probe-cost $(CURDIR)/$(B)/flashprobe
	sh bench/capacity-cost $(CURDIR)/$(B)/flashprobe
	sh bench/overhead $(CURDIR)/$(B)/flashprobe
	sh bench/realtime $(CURDIR)/$(B)/flashprobe
	sh bench/indep-align $(CURDIR)/$(B)/flashprobe
	sh bench/indep-capacity $(CURDIR)/$(B)/flashprobe
	sh bench/indep-openau $(CURDIR)/$(B)/flashprobe
	sh bench/indep-ausearch $(CURDIR)/$(B)/flashprobe
	sh bench/indep-probe $(CURDIR)/$(B)/flashprobe
	sh bench/stability $(CURDIR)/$(B)/check_flashprobe

# libFuzzer harnesses for the parsers of what users type and of what check
# reads from a card (fuzz/*.c), built
# with clang, ASan and UBSan and run FUZZ_TIME seconds each.  Not part of
# check.  New corpus entries go to build/fuzz/corpus-NAME, crashes to
# build/fuzz/NAME-crash-*; fuzz/corpus/NAME holds the seeds.
FUZZ_CC    ?= clang
FUZZ_TIME  ?= 30
FZ         := build/fuzz
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -g -O1 -std=gnu11 -Wall -Wextra -Werror -MMD -MP $(FUZZ_SAN)
FUZZ_BINS  := $(patsubst fuzz/%.c,$(FZ)/%,$(wildcard fuzz/*.c))
FUZZ_LIB   := $(LIB_SRCS:%.c=$(FZ)/lib/%.o)

fuzz: fuzz-toolchain $(FUZZ_BINS)
	@for h in $(FUZZ_BINS); do \
	    n=$$(basename $$h); mkdir -p $(FZ)/corpus-$$n; \
	    echo "== $$n: $(FUZZ_TIME) s =="; \
	    $$h -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
	        -artifact_prefix=$(FZ)/$$n- \
	        $$(test -f fuzz/$$n.dict && echo -dict=fuzz/$$n.dict) \
	        $(FZ)/corpus-$$n $$(test -d fuzz/corpus/$$n && echo fuzz/corpus/$$n) \
	        || { echo "$$n failed: the input is in $(FZ)/$$n-*"; exit 1; }; \
	done

# Says what to install when clang or its libFuzzer runtime is missing.
fuzz-toolchain:
	@mkdir -p $(FZ)
	@printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)%s\n' \
	    '{ (void)d; (void)n; return 0; }' > $(FZ)/toolchain.c
	@$(FUZZ_CC) -fsanitize=fuzzer,address,undefined $(FZ)/toolchain.c \
	    -o $(FZ)/toolchain 2>/dev/null || { \
	    echo "make fuzz needs clang with libFuzzer and the sanitizer runtimes:"; \
	    echo "  apt-get install -y clang libclang-rt-14-dev   (Debian 12; FUZZ_CC=clang-NN for another version)"; \
	    exit 1; }

.SECONDARY: $(FUZZ_LIB)

$(FZ)/lib/%.o: %.c | fuzz-toolchain
	@mkdir -p $(FZ)/lib
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FZ)/%: fuzz/%.c $(FUZZ_LIB) | fuzz-toolchain
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer -I. $< $(FUZZ_LIB) -o $@ $(LDLIBS)

# `make install` builds, then copies: the binary, the man page, the bash
# completion, README.md and docs/*.md.  install-files only copies
# (INSTALL_BIN, default the built binary), so that a test can install an
# already built binary into a DESTDIR without rebuilding anything.
BINDIR     = $(PREFIX)/bin
MANDIR     = $(PREFIX)/share/man/man1
COMPLETDIR = $(PREFIX)/share/bash-completion/completions
DOCDIR     = $(PREFIX)/share/doc/flashprobe
INSTALL_BIN ?= $(B)/flashprobe
DOCS       := README.md $(wildcard docs/*.md)

install: $(B)/flashprobe
	@$(MAKE) --no-print-directory install-files

install-files:
	install -D -m 0755 $(INSTALL_BIN) $(DESTDIR)$(BINDIR)/flashprobe
	install -D -m 0644 docs/flashprobe.1 $(DESTDIR)$(MANDIR)/flashprobe.1
	install -D -m 0644 completion/flashprobe.bash $(DESTDIR)$(COMPLETDIR)/flashprobe
	install -d $(DESTDIR)$(DOCDIR)
	install -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/flashprobe $(DESTDIR)$(MANDIR)/flashprobe.1 \
	    $(DESTDIR)$(COMPLETDIR)/flashprobe
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(DOCS)))
	-rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null

# make install into a scratch DESTDIR, and check what landed there.
check-install: $(B)/flashprobe
	rm -rf $(B)/destdir
	@$(MAKE) --no-print-directory install-files DESTDIR=$(CURDIR)/$(B)/destdir PREFIX=/usr
	$(B)/destdir/usr/bin/flashprobe --version
	test -s $(B)/destdir/usr/share/man/man1/flashprobe.1
	test -s $(B)/destdir/usr/share/bash-completion/completions/flashprobe
	test -s $(B)/destdir/usr/share/doc/flashprobe/README.md
	@$(MAKE) --no-print-directory uninstall DESTDIR=$(CURDIR)/$(B)/destdir PREFIX=/usr
	test -z "$$(find $(B)/destdir -type f)"
	rm -rf $(B)/destdir

clean:
	rm -rf $(B) flashprobe

.PHONY: all check check-long check-run check-lib deps demo bench fuzz fuzz-toolchain install install-files uninstall check-install clean FORCE

-include $(wildcard $(B)/*.d $(B)/tests/*.d $(S)/*.d $(S)/tests/*.d $(FZ)/*.d $(FZ)/lib/*.d)
