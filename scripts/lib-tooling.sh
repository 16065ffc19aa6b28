# shellcheck shell=sh
# Sourced by scripts/test.sh (so every test it runs has it): the
# RSURING_* variables that the project's scripts and tests read, never the
# library. The library reports every RSURING_* name it does not read (a
# misspelling would otherwise do nothing); RSURING_QUIET_UNKNOWN, its
# documented switch (rsuring(7)), tells it which names are the tools'.
# Adding a variable to a script or test means adding it here.
RSURING_TOOLING_NAMES="RSURING_STRICT RSURING_BLESS RSURING_FUZZ_FRESH RSURING_COMPAT_DIR
RSURING_COMPAT_TIMEOUT RSURING_NO_APT RSURING_SKIP_CARGO RSURING_CC RSURING_INCLUDE
RSURING_SUITE_USER RSURING_SUITE_CPUS RSURING_UPSTREAM_LIBURING RSURING_OLDKERNELS
RSURING_SERIAL_STAGES"
RSURING_QUIET_UNKNOWN=$(echo $RSURING_TOOLING_NAMES | tr ' ' ,)
export RSURING_QUIET_UNKNOWN
