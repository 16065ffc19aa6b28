#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Layout equality: builds layout.c against the reference liburing header
# (the system's, from liburing-dev) and against rsuring's include/, runs
# both and requires identical output.
#
# Usage: c_tests/layout/check.sh            (from any directory)
# Environment:
#   CC             compiler (default: cc)
#   REF_INCLUDE    directory holding the reference liburing.h
#                  (default: the compiler's standard search path)
#   RSURING_INCLUDE  rsuring's include directory (default: <repo>/include)
#
# Exit status: 0 identical, 1 mismatch or build failure; without the
# reference header, 1 under RSURING_STRICT=1, else 0 with a SKIPPED line
# (scripts/lib/skip.sh).

set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cc=${CC:-cc}
ours_inc=${RSURING_INCLUDE:-$root/include}
ref_inc=${REF_INCLUDE:-}
cflags="-std=gnu11 -Wall -Wextra -Werror"

. "$root/scripts/lib/skip.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rsuring-layout.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

# Is the reference header there at all?
printf '#include <liburing.h>\n' > "$tmp/probe.c"
if ! $cc ${ref_inc:+-I"$ref_inc"} -fsyntax-only "$tmp/probe.c" 2>/dev/null
then
	skip "no reference <liburing.h> (Debian package liburing-dev, which scripts/setup.sh installs, or set REF_INCLUDE)"
fi

# liburing.h includes the cbindgen-generated liburing/rsuring_api.h.  The
# layouts do not depend on it; if it has not been generated yet, stand in
# with the two prototypes the inline helpers call.
stub=
if [ ! -f "$ours_inc/liburing/rsuring_api.h" ]; then
	stub="$tmp/stub"
	mkdir -p "$stub/liburing"
	cat > "$stub/liburing/rsuring_api.h" <<'STUB'
int __io_uring_get_cqe(struct io_uring *ring, struct io_uring_cqe **cqe_ptr,
		       unsigned submit, unsigned wait_nr, sigset_t *sigmask);
int __io_uring_sqring_wait(struct io_uring *ring);
STUB
	echo "layout: note: $ours_inc/liburing/rsuring_api.h missing, using a stub"
fi

fail=0
if ! $cc $cflags ${ref_inc:+-I"$ref_inc"} -o "$tmp/layout-ref" \
	"$here/layout.c" >"$tmp/build-ref.log" 2>&1; then
	echo "layout: FAIL: layout.c does not build against the reference header:"
	cat "$tmp/build-ref.log"
	fail=1
fi
if ! $cc $cflags -I"$ours_inc" ${stub:+-I"$stub"} -o "$tmp/layout-ours" \
	"$here/layout.c" >"$tmp/build-ours.log" 2>&1; then
	echo "layout: FAIL: layout.c does not build against $ours_inc:"
	cat "$tmp/build-ours.log"
	fail=1
fi
[ $fail -eq 0 ] || exit 1

"$tmp/layout-ref" > "$tmp/ref.txt" || { echo "layout: FAIL: reference probe did not run"; exit 1; }
"$tmp/layout-ours" > "$tmp/ours.txt" || { echo "layout: FAIL: rsuring probe did not run"; exit 1; }

lines=$(wc -l < "$tmp/ref.txt" | tr -d ' ')
if diff -u "$tmp/ref.txt" "$tmp/ours.txt" > "$tmp/diff.txt"; then
	echo "layout: PASS: $lines sizes/offsets identical to the reference liburing header"
	exit 0
fi
echo "layout: FAIL: layouts differ (- reference, + rsuring):"
cat "$tmp/diff.txt"
exit 1
