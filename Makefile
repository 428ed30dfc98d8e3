# caio: PGXS build.  The version lives in caio.control; the install script's
# name and the C code (CAIO_VERSION) take it from there.  META.json, which is
# tracked, carries the same version by hand: test/meta.sh checks that they
# agree (a build never rewrites a tracked file).

EXTENSION   = caio
PG_CONFIG  ?= pg_config
EXTVERSION := $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" $(EXTENSION).control)

MODULE_big  = caio
OBJS        = src/caio.o src/catalog.o src/args.o src/guard.o src/refusal.o \
              src/clock.o src/lease.o src/resource_lock.o src/fencing.o \
              src/versioned.o src/address.o src/nonce.o src/claims.o \
              src/token.o src/token_flush.o src/token_held.o src/shared.o src/stats.o \
              src/rows.o src/merge.o src/citus.o src/search_path.o
# The headers in src/ are caio's own, not an API for other extensions: they
# are not installed.

DATA_built  = sql/$(EXTENSION)--$(EXTVERSION).sql
# Upgrade scripts, and the install scripts of earlier versions as released.
# At a version bump, add the released sql/caio--<old>.sql to git (and to
# .gitignore's exceptions) before make builds the new one.
DATA        = $(filter-out $(DATA_built), $(wildcard sql/$(EXTENSION)--*.sql))

PG_CPPFLAGS = -DCAIO_VERSION=\"$(EXTVERSION)\"
# Full warnings for our code; PostgreSQL's own headers are treated as system
# headers, since they do not build clean under -Wextra themselves.
PG_CFLAGS   = -Wall -Wextra -Werror
PG_CPPFLAGS += -isystem $(shell $(PG_CONFIG) --includedir-server)

# Regression suites: sql/<name>.sql against expected/<name>.out (the PGXS
# layout; sql/ also holds the install script's source, sql/caio.sql).
REGRESS      = clock lease lease_errors lease_purge fencing fencing_errors versioned nonce nonce_errors nonce_dropped \
               claims claims_errors claims_order merge first_statement altered_tables stats bad_input versions \
               privileges reinstall tokens upgrade planted planted_names own_tables guard_triggers \
               publication cutover_epoch
REGRESS_OPTS = --load-extension=caio

# Isolation specs: test/isolation/specs/<name>.spec, expected output in
# test/isolation/expected.  Their database is made by isolation-db (below)
# so that isolationtester can see caio's latch waits.
ISOLATION      = acquire_race acquire_nonblocking acquire_wait renew_takeover clock_shared \
                 fence_paused_holder fence_holds_takeover fence_behind_takeover versioned_race \
                 nonce_two_reservers nonce_reserve_release nonce_stale_mark nonce_dropped_run \
                 claims_disjoint claims_ordered claim_takeover claim_renew claim_release_stale claim_locked_table \
                 lease_pin release_not_queued lock_key_collision lock_key_rotation acquire_prepared lease_purge renew_twice
ISOLATION_OPTS = --inputdir=test/isolation --use-existing
REGRESS_PREP   = isolation-db

EXTRA_CLEAN = src/pg_built_for.stamp

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# caio_tap, the companion extension of pgTAP checks in tap/, is built,
# installed and cleaned along with caio.
TAP_GOALS = all install uninstall clean
.PHONY: $(addprefix tap-,$(TAP_GOALS))
$(foreach goal,$(TAP_GOALS),$(eval $(goal): tap-$(goal)))
$(addprefix tap-,$(TAP_GOALS)):
	$(MAKE) -C tap PG_CONFIG=$(PG_CONFIG) $(@:tap-%=%)

# Objects are rebuilt when any of caio's headers changes, and when they were
# built against another PostgreSQL: src/pg_built_for.stamp names the server
# headers they were built with, and make rewrites it only when that changes.
PG_BUILT_FOR := $(shell $(PG_CONFIG) --version) $(shell $(PG_CONFIG) --includedir-server)
$(OBJS): $(wildcard src/*.h) src/pg_built_for.stamp
.PHONY: pg-built-for-check
src/pg_built_for.stamp: pg-built-for-check
	@echo '$(PG_BUILT_FOR)' | cmp -s - $@ || echo '$(PG_BUILT_FOR)' > $@

sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql $(EXTENSION).control
	cp $< $@

.PHONY: isolation-db
isolation-db:
	psql -X -q -v ON_ERROR_STOP=1 -d postgres \
	  -c 'DROP DATABASE IF EXISTS $(ISOLATION_TESTDB)' \
	  -c 'CREATE DATABASE $(ISOLATION_TESTDB) TEMPLATE template0'
	psql -X -q -v ON_ERROR_STOP=1 -d $(ISOLATION_TESTDB) \
	  -c 'CREATE EXTENSION caio' -f test/isolation/see_caio_waits.sql


# The benchmark (test/bench/run.sh, see doc/benchmark.md): sets up, builds
# and installs caio, and runs every workload beside its baselines in a
# throwaway cluster, then the churn.  bench-smoke: every workload for 1 s,
# one round, a churn of 20000, to show that the command works end to end.
# bench-soak (test/bench/soak.sh): the churn for BENCH_SOAK_MINUTES (10) in
# a cluster of its own, caio's tables sampled every 30 s, and whether they
# stay bounded.
.PHONY: bench bench-smoke bench-soak
bench:
	test/bench/run.sh
bench-smoke:
	BENCH_SMOKE=1 test/bench/run.sh
bench-soak:
	test/bench/soak.sh
