#!/usr/bin/env bash
# The manual pages check: every page in man/ is clean for `mandoc -T lint`
# (style level included) and renders with `man -l` without a warning; each
# says "rsuring <Cargo.toml version>"; every exported extension function
# (include/liburing/rsuring_ext_api.h) and IORING_SETUP_SQPOLL_PERCPU has a
# page; rsuring(7) has one ENVIRONMENT subsection per RSURING_* variable
# the library reads (src/), no other, and lists every man3 page.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib/skip.sh
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
failures=0
need_tool mandoc mandoc
need_tool man man-db
version=$(make -s print-version)
warnings=$(mktemp)
trap 'rm -f "$warnings"' EXIT

pages=(man/man3/*.3 man/man7/*.7)
for page in "${pages[@]}"; do
	lint=$(mandoc -T lint -W style "$page" 2>&1) || true
	[ -z "$lint" ] || fail "mandoc -T lint $page: $lint"
	out=$(MANWIDTH=80 man --warnings -l "$page" 2>"$warnings") || fail "man -l $page failed"
	[ ! -s "$warnings" ] || fail "man -l $page: $(cat "$warnings")"
	grep -q '^NAME' <<<"$out" || fail "man -l $page: no NAME section"
	grep -q "^\.TH [^ ]* [0-9] [0-9-]* \"rsuring $version\" \"rsuring Manual\"$" "$page" ||
		fail "$page: .TH does not say \"rsuring $version\""
done

functions=$(sed -n 's/^[a-z].* \**\(rsuring_[a-z_]*\)(.*/\1/p' include/liburing/rsuring_ext_api.h)
[ -n "$functions" ] || fail "no functions found in rsuring_ext_api.h"
for name in $functions IORING_SETUP_SQPOLL_PERCPU; do
	[ -f "man/man3/$name.3" ] || fail "no man/man3/$name.3"
done

variables=$(grep -ohE '"RSURING_[A-Z_]+"' src/*.rs src/*/*.rs | tr -d '"' | sort -u)
documented=$(sed -n 's/^\.SS \(RSURING_[A-Z_]*\)$/\1/p' man/man7/rsuring.7 | sort -u)
[ "$variables" = "$documented" ] ||
	fail "rsuring(7) ENVIRONMENT subsections ($(echo $documented)) differ from the variables src/ reads ($(echo $variables))"
for page in man/man3/*.3; do
	name=$(basename "$page" .3)
	grep -q "^\.BR $name (3)" man/man7/rsuring.7 || fail "rsuring(7) does not refer to $name(3)"
done

[ "$failures" -eq 0 ] || { echo "man check: $failures failures" >&2; exit 1; }
echo "man check: ok (${#pages[@]} pages: mandoc lint and man -l clean; $(echo $variables | wc -w) variables documented)"
