#!/usr/bin/env bash
# The manual pages check: every page in docs/man/ is clean for `mandoc -T lint`
# (style level included) and renders with `man -l` without a warning; each
# says "rsuring <Cargo.toml version>"; every exported rsuring_* function
# (the RSURING_* nodes of liburing.map and include/liburing/rsuring_ext_api.h)
# and IORING_SETUP_SQPOLL_PERCPU has a man3 page; every program the Makefile
# installs has a page (bindir: man1, sbindir: man8) and the Makefile installs
# every page; each program's page documents the --help and --version its
# source (packaging/NAME.in, src/bin/NAME.rs) accepts (scripts/check-install.sh
# runs the scripts'); rsuring(7) has one ENVIRONMENT subsection per RSURING_*
# variable the library reads (src/), no other, and refers to every page.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib-skip.sh
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
failures=0
need_tool mandoc mandoc
need_tool man man-db
version=$(make -s print-version)
warnings=$(mktemp)
trap 'rm -f "$warnings"' EXIT

pages=(docs/man/man1/*.1 docs/man/man3/*.3 docs/man/man7/*.7 docs/man/man8/*.8)
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
# The symbols liburing.map exports under rsuring's own nodes.
exported=$(awk '/^RSURING_[0-9.]* *\{/ { node = 1; next } /^\}/ { node = 0 }
	node && /^[[:space:]]*rsuring_[a-z_0-9]*;/ { gsub(/[[:space:];]/, ""); print }' src/ffi/liburing.map | sort -u)
[ -n "$exported" ] || fail "no rsuring_* symbols found in src/ffi/liburing.map"
for name in $(echo $functions $exported | tr ' ' '\n' | sort -u) IORING_SETUP_SQPOLL_PERCPU; do
	[ -f "docs/man/man3/$name.3" ] || fail "no docs/man/man3/$name.3"
done

# The programs make install puts in bindir (section 1) and sbindir (8).
programs=0
for dir_section in bindir:1 sbindir:8; do
	section=${dir_section#*:}
	for program in $(grep -o "\$(DESTDIR)\$(${dir_section%:*})/rsuring-[a-z-]*" Makefile | sed 's|.*/||' | sort -u); do
		programs=$((programs + 1))
		page=docs/man/man$section/$program.$section
		[ -f "$page" ] || { fail "$program is installed but has no $page"; continue; }
		source=
		for f in "packaging/$program.in" "src/bin/$program.rs"; do [ -f "$f" ] && source=$f; done
		[ -n "$source" ] || { fail "$program: no packaging/$program.in or src/bin/$program.rs"; continue; }
		for option in help version; do
			grep -qE -- "(^|[\"| ])--$option[\")]" "$source" || continue
			grep -qE "^\.BR? .*\\\\-\\\\-$option( |$)" "$page" || fail "$page does not document --$option, which $source accepts"
		done
	done
done
[ "$programs" -gt 0 ] || fail "no installed programs found in the Makefile"
installed=$(make -s -n install DESTDIR=/nonexistent 2>/dev/null | grep -o 'man/man[0-9]/[^ ]*' | sort -u)
for page in "${pages[@]}"; do
	grep -qx "${page#docs/}" <<<"$installed" || fail "make install does not install $page"
done

variables=$(grep -ohE '"RSURING_[A-Z_]+"' src/*.rs src/*/*.rs | tr -d '"' | sort -u)
documented=$(sed -n 's/^\.SS \(RSURING_[A-Z_]*\)$/\1/p' docs/man/man7/rsuring.7 | sort -u)
[ "$variables" = "$documented" ] ||
	fail "rsuring(7) ENVIRONMENT subsections ($(echo $documented)) differ from the variables src/ reads ($(echo $variables))"
for page in docs/man/man1/*.1 docs/man/man3/*.3 docs/man/man8/*.8; do
	name=$(basename "$page")
	section=${name##*.}
	name=${name%.*}
	grep -q "^\.BR $(sed 's/-/\\\\-/g' <<<"$name") ($section)" docs/man/man7/rsuring.7 ||
		fail "rsuring(7) does not refer to $name($section)"
done

[ "$failures" -eq 0 ] || { echo "man check: $failures failures" >&2; exit 1; }
echo "man check: ok (${#pages[@]} pages: mandoc lint and man -l clean; $(echo $variables | wc -w) variables documented)"
