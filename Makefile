# ngx_http_cms_module: build, test, run, bench, fuzz.
#
#   make [build]        the module: build/ngx_http_cms_module.so (build-asan/ with ASAN=1),
#                       and build/cms-admin (the command-line tool, src/tools/)
#   make unit           C unit tests t/unit/test_*.c (cmocka) against src/lib/*.c
#   make test           deps, build, unit, then the nginx tests t/*.t (prove) next to a
#                       throwaway PostgreSQL + Redis; `make test ASAN=1` does it all with
#                       AddressSanitizer + UBSan
#   make run            PostgreSQL, Redis and nginx in the foreground (Ctrl-C stops all)
#   make start / stop   the same in the background / stop it
#   make fleet          FLEET_HOSTS (3) nginx hosts on 8081.. behind a round-robin nginx on
#                       8080, over one PostgreSQL primary with a streaming replica, one
#                       Redis and one local S3 bucket, in var/fleet/ (scripts/fleet.sh);
#                       make fleet-stop stops it all
#   make bench          health vs static file vs bare pgbench, on throwaway services
#   make bench-check    the last bench's ratios against bench/baseline.tsv (15 % guard)
#   make install        the module, cms-admin and the migrations (PREFIX, DESTDIR)
#   make deb            the Debian package libnginx-mod-http-cms in build/deb/
#   make deb-check      installs that package here, tries it, removes it (root)
#   make fuzz           libFuzzer targets fuzz/*.c, FUZZ_SECONDS each (default 30)
#   make clean          build output (not var/: `make stop` then `rm -rf var` for that)
#
# make run/start use ports from the environment, with these defaults:
#   CMS_PORT=8080 (nginx)  CMS_PG_PORT=54320 (PostgreSQL)  CMS_REDIS_PORT=63790 (Redis)
# Every target installs the Debian packages it needs first (scripts/deps.sh); DEPS=0
# skips that (a package build, whose build dependencies debian/control names).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

ASAN ?= 0
# FAULTS=1 compiles in the test-only fault points (NGX_HTTP_CMS_FAULTS); make test
# builds that way, in a folder of its own; make and make run never do.
FAULTS ?= 0
FUZZ_SECONDS ?= 30
DEPS ?= 1
VERSION := $(shell cat VERSION)
# make install: the module where Debian's nginx loads modules from, the rest under PREFIX
PREFIX ?= /usr/local
DESTDIR ?=
NGINX_MODULES_DIR ?= /usr/lib/nginx/modules
DATA_DIR := $(PREFIX)/share/nginx-cms

SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
ifeq ($(ASAN),1)
BUILD := build-asan
UNIT_SAN := $(SAN_FLAGS)
else
BUILD := build
UNIT_SAN :=
endif
ifeq ($(FAULTS),1)
BUILD := $(BUILD)-test
endif

NGX_SRC := $(BUILD)/nginx-src
MODULE := $(BUILD)/ngx_http_cms_module.so
MODULE_ABS := $(CURDIR)/$(MODULE)

LIB_SRCS := $(wildcard src/lib/*.c)
LIB_HDRS := $(wildcard src/lib/*.h)
UNIT_SRCS := $(wildcard t/unit/test_*.c)
UNIT_BINS := $(patsubst t/unit/%.c,$(BUILD)/unit/%,$(UNIT_SRCS))
UNIT_CFLAGS := -Isrc/lib -std=c99 -Wall -Wextra -Werror -O1 -g $(UNIT_SAN)
# What src/lib may link against (unit tests, fuzz targets and cms-admin link it too).
LIB_LIBS := -lcrypto -lgumbo -largon2 -ljansson -licuuc
UNIT_LIBS := -lcmocka $(LIB_LIBS)
FUZZ_SRCS := $(wildcard fuzz/*.c)
# cms-admin, the command-line tool (bootstrap, keys, demo seed): src/tools/ over src/lib/.
ADMIN_SRCS := $(wildcard src/tools/*.c)
ADMIN_HDRS := $(wildcard src/tools/*.h)
ADMIN := $(if $(ADMIN_SRCS),$(BUILD)/cms-admin)
ADMIN_CFLAGS := -Isrc/lib -Isrc/tools -I/usr/include/postgresql -std=c99 -Wall -Wextra \
                -Werror -O2 -g $(UNIT_SAN)
# The served API description (src/ngx_http_cms_docs.c, GET /v1/openapi.json and /v1/docs):
# openapi/openapi.yaml as JSON and the page @redocly/cli (tools/node) renders from it, with
# their ETags and the page's CSP, written as C by scripts/docs-embed. `config` compiles the
# file NGX_HTTP_CMS_DOCS_DATA names, so configure runs once and nginx's make recompiles it.
DOCS_DATA := $(BUILD)/gen/ngx_http_cms_docs_data.c

.PHONY: all build unit test test-run run start stop fleet fleet-stop bench fuzz clean install deb \
        deb-check bench-check \
        deps-build deps-run deps-test deps-bench deps-fuzz deps-deb

all: build

deps-build deps-run deps-test deps-bench deps-fuzz deps-deb: deps-%:
	@if [ "$(DEPS)" = 1 ]; then scripts/deps.sh $*; fi

# --- the module -----------------------------------------------------------------------
# Configure once per build folder and again whenever `config` (the module's source list)
# changes; `make -f objs/Makefile modules` runs every time because it is incremental and
# knows the dependencies of src/ files, which this Makefile does not.

# The module's objects are compiled one per core, unless make was given -j itself (its
# jobserver then shares the cores out); MAKEFLAGS holds -j only in recipes.
NPROC := $(shell nproc)
NGX_JOBS = $(if $(findstring -j,$(MAKEFLAGS)),,-j$(NPROC))

build: $(NGX_SRC)/objs/Makefile $(DOCS_DATA) $(ADMIN) | deps-build
	@$(MAKE) --no-print-directory $(NGX_JOBS) -C $(NGX_SRC) -f objs/Makefile modules
	@install -m 755 $(NGX_SRC)/objs/ngx_http_cms_module.so $(MODULE)
	@echo "built $(MODULE)"

$(BUILD)/cms-admin: $(ADMIN_SRCS) $(ADMIN_HDRS) $(LIB_SRCS) $(LIB_HDRS) | deps-build
	@mkdir -p $(@D)
	$(CC) $(ADMIN_CFLAGS) -DCMS_ADMIN_SQL_DIR='"$(CURDIR)/sql"' -o $@ $(ADMIN_SRCS) $(LIB_SRCS) -lpq $(LIB_LIBS)

$(DOCS_DATA): openapi/openapi.yaml scripts/docs-embed tools/node/package-lock.json | deps-build
	scripts/docs-embed $@

$(NGX_SRC)/conf_flags: | deps-build
	@rm -rf $(NGX_SRC) $(NGX_SRC).tmp
	@mkdir -p $(BUILD)
	cp -r /usr/share/nginx/src $(NGX_SRC).tmp
	@mv $(NGX_SRC).tmp $(NGX_SRC)

$(NGX_SRC)/objs/Makefile: config scripts/configure-nginx.sh | $(NGX_SRC)/conf_flags
	@echo "configuring nginx with the module (about 10 s)"
	NGX_HTTP_CMS_DOCS_DATA=$(CURDIR)/$(DOCS_DATA) \
	    scripts/configure-nginx.sh $(NGX_SRC) $(CURDIR) $(ASAN) $(FAULTS)

config:
	@echo "no 'config' file: the module's source list is missing" >&2; exit 1

# --- installing, packaging -----------------------------------------------------------
# cms-admin for the installed tree finds the migrations under DATA_DIR, not in sql/ here.
# The package (debian/, docs/packaging.md) is built by Debian's own tooling from a copy of
# the tree; build/deb/ receives the .deb. CMS_REDOCLY hands the copy the reference page's
# renderer when tools/node has it (the copy has no node_modules of its own).

$(BUILD)/install/cms-admin: $(ADMIN_SRCS) $(ADMIN_HDRS) $(LIB_SRCS) $(LIB_HDRS) | deps-build
	@mkdir -p $(@D)
	$(CC) $(ADMIN_CFLAGS) -DCMS_ADMIN_SQL_DIR='"$(DATA_DIR)/sql"' -o $@ $(ADMIN_SRCS) \
	    $(LIB_SRCS) -lpq $(LIB_LIBS)

install: build $(BUILD)/install/cms-admin
	install -D -m 644 $(MODULE) $(DESTDIR)$(NGINX_MODULES_DIR)/ngx_http_cms_module.so
	install -D -m 755 $(BUILD)/install/cms-admin $(DESTDIR)$(PREFIX)/bin/cms-admin
	install -d $(DESTDIR)$(DATA_DIR)/sql $(DESTDIR)$(DATA_DIR)/examples
	install -m 644 sql/*.sql $(DESTDIR)$(DATA_DIR)/sql/
	install -m 644 conf/nginx.conf.in $(DESTDIR)$(DATA_DIR)/examples/

DEB_DIR := build/deb
DEB_SRC := $(DEB_DIR)/nginx-cms-$(VERSION)
REDOCLY := $(wildcard $(CURDIR)/tools/node/node_modules/.bin/redocly)

deb: deps-deb
	@rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	tar -c --exclude=./build --exclude='./build-*' --exclude=./var --exclude=./.git \
	    --exclude=./tools/node/node_modules . | tar -x -C $(DEB_SRC)
	cd $(DEB_SRC) && CMS_REDOCLY=$(REDOCLY) dpkg-buildpackage -us -uc -b
	@ls -1 $(DEB_DIR)/*.deb

# installs the package into this machine's nginx, tries it, removes it (docs/packaging.md)
deb-check: deps-test
	scripts/deb-check.sh

# --- C unit tests ---------------------------------------------------------------------

$(BUILD)/unit/%: t/unit/%.c $(LIB_SRCS) $(LIB_HDRS) | deps-test
	@mkdir -p $(@D)
	$(CC) $(UNIT_CFLAGS) -o $@ $< $(LIB_SRCS) $(UNIT_LIBS)

unit: $(UNIT_BINS)
	@if [ -z "$(UNIT_BINS)" ]; then echo "unit: no t/unit/test_*.c yet"; exit 0; fi; \
	failed=""; \
	for t in $(UNIT_BINS); do \
	    echo "== $$t"; \
	    "$$t" || failed="$$failed $${t##*/}"; \
	done; \
	if [ -n "$$failed" ]; then echo "unit: FAILED:$$failed" >&2; exit 1; fi; \
	echo "unit: all $(words $(UNIT_BINS)) programs passed"

# --- nginx tests ----------------------------------------------------------------------
# Serial on purpose: t/060-restart.t stops the shared PostgreSQL and Redis.

test: deps-test
	@$(MAKE) --no-print-directory test-run ASAN=$(ASAN) FAULTS=1

# The files that measure time, load the machine or stop and start servers run one at a
# time; every other file has its own database, nginx and ports, and three run at once
# (they mostly wait on servers: three keep two cores busy).
TESTS := $(sort $(wildcard t/*.t))
TESTS_ALONE := $(filter $(patsubst %,t/%-%,030 032 034 038 039 045 047 048 049 050 051 052 060 061 \
                 062 063 064 070 118 124 129 141 203 204 205 301),$(TESTS))
TESTS_PAIRED := $(filter-out $(TESTS_ALONE),$(TESTS))
PROVE_JOBS ?= 3

test-run:
	@$(MAKE) --no-print-directory build unit ASAN=$(ASAN) FAULTS=$(FAULTS)
	TEST_CMS_MODULE=$(MODULE_ABS) TEST_CMS_ASAN=$(ASAN) TEST_CMS_FAULTS=$(FAULTS) \
	    TEST_CMS_ADMIN=$(CURDIR)/$(BUILD)/cms-admin \
	    scripts/test-env.sh bash -c 'prove -I t/lib $(TESTS_ALONE) \
	        && prove -j$(PROVE_JOBS) -I t/lib $(TESTS_PAIRED)'

# --- running it -----------------------------------------------------------------------

run: deps-run
	@$(MAKE) --no-print-directory build ASAN=$(ASAN)
	@CMS_MODULE=$(MODULE_ABS) CMS_ASAN=$(ASAN) scripts/cms.sh run

start: deps-run
	@$(MAKE) --no-print-directory build ASAN=$(ASAN)
	@CMS_MODULE=$(MODULE_ABS) CMS_ASAN=$(ASAN) scripts/cms.sh start

stop:
	@scripts/cms.sh stop

fleet: deps-run
	@$(MAKE) --no-print-directory build ASAN=$(ASAN)
	@CMS_MODULE=$(MODULE_ABS) CMS_ASAN=$(ASAN) scripts/fleet.sh start

fleet-stop:
	@scripts/fleet.sh stop

bench: deps-bench
	@$(MAKE) --no-print-directory build ASAN=$(ASAN)
	@CMS_MODULE=$(MODULE_ABS) bench/run.sh

# the last bench run's ratios (build/bench/ratios.tsv) against bench/baseline.tsv: every
# ratio that fell by more than 15 % is named, and the check fails
bench-check:
	@scripts/bench-check

# --- fuzzing --------------------------------------------------------------------------
# Each fuzz/<name>.c is a libFuzzer target over src/lib. New inputs go to
# $(BUILD)/fuzz/corpus-<name>; fuzz/corpus/<name>/ (if present) seeds it; fuzz/<name>.dict
# is used when present. Crash reproducers land in $(BUILD)/fuzz/.

fuzz: deps-fuzz
	@if [ -z "$(FUZZ_SRCS)" ]; then echo "fuzz: no fuzz/*.c targets yet"; exit 0; fi; \
	mkdir -p $(BUILD)/fuzz; \
	for src in $(FUZZ_SRCS); do \
	    name=$$(basename $$src .c); bin=$(BUILD)/fuzz/$$name; \
	    echo "== $$name"; \
	    clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	        -Isrc/lib -o $$bin $$src $(LIB_SRCS) $(LIB_LIBS); \
	    corpus=$(BUILD)/fuzz/corpus-$$name; mkdir -p $$corpus; \
	    seeds=(); [ -d fuzz/corpus/$$name ] && seeds=(fuzz/corpus/$$name); \
	    dict=(); [ -f fuzz/$$name.dict ] && dict=(-dict=fuzz/$$name.dict); \
	    $$bin -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	        -artifact_prefix=$(BUILD)/fuzz/$$name- "$${dict[@]}" $$corpus "$${seeds[@]}"; \
	done

clean:
	rm -rf build build-asan
