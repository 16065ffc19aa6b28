#!/usr/bin/env bash
# Real programs: Debian-packaged binaries that link liburing.so.2 run
# unchanged with rsuring under LD_PRELOAD, and what they print and the data
# they write are compared with a run of the same binary on Debian's liburing.
#
#   scripts/real_programs.sh ABS_PATH_TO_librsuring.so [WORKDIR]
#
# Programs (scripts/setup.sh installs their packages; this script installs
# nothing):
#   qemu-img convert  raw -> qcow2, source read with file.aio=io_uring
#                      (qemu-utils); output files compared byte for byte,
#                      and against the source with `qemu-img compare`
#   qemu-io --aio io_uring   pattern writes, verified and hex-dumped reads
#                      (qemu-utils); output (timing lines removed) and the
#                      image written compared
#   plocate           searches of a private database over a private tree
#                      (plocate reads its posting lists through io_uring);
#                      output compared
# Proof that rsuring served the calls: the dynamic linker's binding log
# (LD_DEBUG=bindings) must show the program's io_uring_* symbols bound to
# librsuring.so and nothing bound to Debian's liburing; and for qemu, whose
# rings are torn down at exit, RSURING_STATS=1 must print `rsuring:` lines.
#
# Exit 0: every program ran and passed; 1: one failed; 77: none failed, but
# one or more are missing (a "skipped: ..." line on stderr names each; the
# test driver makes that a failure under RSURING_STRICT=1).
set -euo pipefail

lib=${1:?usage: real_programs.sh ABS_PATH_TO_librsuring.so [WORKDIR]}
work=${2:-$(mktemp -d)}
case $lib in /*) ;; *) echo "library path must be absolute: $lib" >&2; exit 2 ;; esac
[ -f "$lib" ] || { echo "no $lib" >&2; exit 2; }
mkdir -p "$work"
cd "$work"

unset RSURING_SQPOLL RSURING_SQPOLL_PERCPU RSURING_SQPOLL_CPUS RSURING_SQPOLL_IDLE_MS RSURING_STATS
failures=0
ran=0
missing=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# skipped WHAT WHY: WHAT cannot run here.
skipped() { echo "real programs: skipped $1: $2" >&2; missing=$((missing + 1)); }

# want VAR BINARY PACKAGE: VAR= the binary's path, or empty (and a skip)
# when it is not installed.
want() {
    local path
    path=$(command -v "$2" || true)
    [ -n "$path" ] || skipped "$2" "not installed (Debian package $3; scripts/setup.sh installs it)"
    printf -v "$1" '%s' "$path"
}

# links NAME BINARY: true if BINARY needs liburing.so.2; otherwise a skip.
links() {
    links_liburing "$2" && return 0
    skipped "$1" "$2 does not link liburing.so.2"
    return 1
}

# links_liburing BINARY: true if it needs liburing.so.2.
links_liburing() { readelf -d "$1" 2>/dev/null | grep -q 'NEEDED.*\[liburing\.so\.2\]'; }

# on_rsuring NAME CMD...: runs CMD with rsuring preloaded and a binding log;
# stdout to NAME.r.out, stderr to NAME.r.err.
on_rsuring() {
    local name=$1; shift
    rm -f "$name".bind.*
    RSURING_STATS=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT="$work/$name.bind" LD_PRELOAD="$lib" \
        "$@" >"$name.r.out" 2>"$name.r.err"
}
# on_liburing NAME CMD...: the same on Debian's liburing.
on_liburing() {
    local name=$1; shift
    "$@" >"$name.l.out" 2>"$name.l.err"
}

# check_bindings NAME: the program's (and its other libraries') io_uring_*
# symbols bound to our library, none to another one. (Bindings inside
# librsuring.so itself are left out.)
check_bindings() {
    local name=$1 log ours theirs
    log=$(cat "$name".bind.* 2>/dev/null | grep "normal symbol \`io_uring_" | grep -v "binding file $lib " || true)
    ours=$(grep -c "to $lib " <<<"$log" || true)
    theirs=$(grep -vc "to $lib " <<<"$log" || true)
    [ -n "$log" ] || theirs=0
    if [ "$ours" -eq 0 ]; then
        fail "$name: no io_uring_* symbol of the program was bound to $lib"
    elif [ "$theirs" -ne 0 ]; then
        fail "$name: $theirs io_uring_* bindings went elsewhere: $(grep -v "to $lib " <<<"$log" | head -3)"
    else
        echo "  $name: the program's io_uring_* symbols are bound to librsuring.so, none elsewhere:" \
             "$(grep -o "normal symbol \`io_uring_[a-z_0-9]*" <<<"$log" | sort -u | sed 's/.*`//' | tr '\n' ' ')"
    fi
    rm -f "$name".bind.*
}

# ---- qemu-utils -----------------------------------------------------------
want qemu_img qemu-img qemu-utils
want qemu_io qemu-io qemu-utils
if [ -n "$qemu_img" ] && links qemu-img "$qemu_img"; then
    ran=$((ran + 1))
    echo "qemu-img: $("$qemu_img" --version | head -1)"
    # 6 MiB source: random data with holes of zeros.
    head -c 4194304 /dev/urandom > src.raw
    head -c 1048576 /dev/zero >> src.raw
    head -c 1048576 /dev/urandom >> src.raw
    opts="driver=raw,file.driver=file,file.filename=$work/src.raw,file.aio=io_uring"
    rm -f conv.l.qcow2 conv.r.qcow2
    on_liburing convert "$qemu_img" convert -O qcow2 --image-opts "$opts" conv.l.qcow2 ||
        fail "qemu-img convert on Debian's liburing: exit $?"
    on_rsuring convert "$qemu_img" convert -O qcow2 --image-opts "$opts" conv.r.qcow2 ||
        fail "qemu-img convert on rsuring: exit $? ($(head -c 400 convert.r.err))"
    if cmp -s conv.l.qcow2 conv.r.qcow2; then
        echo "  qemu-img convert: qcow2 written on rsuring is byte-identical to the one written on liburing ($(stat -c %s conv.r.qcow2) bytes)"
    else
        fail "qemu-img convert: outputs differ"
    fi
    "$qemu_img" compare -q -f raw -F qcow2 src.raw conv.r.qcow2 || fail "qemu-img compare: converted image differs from the source"
    grep -q '^rsuring: pid=' convert.r.err || fail "qemu-img convert: no rsuring: statistics line (rsuring not used?)"
    echo "  qemu-img convert: $(grep -c '^rsuring: pid=' convert.r.err) rsuring rings reported statistics at exit"
    check_bindings convert
fi
if [ -n "$qemu_io" ] && links qemu-io "$qemu_io"; then
    ran=$((ran + 1))
    script=(-c 'write -P 0xa5 0 1M' -c 'write -P 0x3c 1536K 64K' -c 'writev -P 0x11 2M 4k 8k 4k'
            -c 'aio_write -P 0x77 3M 256K' -c 'aio_flush'
            -c 'read -P 0xa5 0 1M' -c 'read -P 0x3c 1536K 64K' -c 'readv -P 0x11 2M 16k'
            -c 'read -P 0x77 3M 256K' -c 'read -v 1048000 1200' -c 'flush')
    for side in l r; do
        head -c 4194304 /dev/zero > io.$side.raw
    done
    on_liburing qemuio "$qemu_io" --aio io_uring -f raw "${script[@]}" io.l.raw ||
        fail "qemu-io on Debian's liburing: exit $?"
    on_rsuring qemuio "$qemu_io" --aio io_uring -f raw "${script[@]}" io.r.raw ||
        fail "qemu-io on rsuring: exit $? ($(head -c 400 qemuio.r.err))"
    # Timing lines ("1 MiB, 1 ops; 00.00 sec (...)") differ from run to run.
    for side in l r; do
        grep -v ' ops; ' qemuio.$side.out | sed "s#io\.$side\.raw#IMG#g" > qemuio.$side.filtered
    done
    if cmp -s qemuio.l.filtered qemuio.r.filtered && [ -s qemuio.r.filtered ]; then
        echo "  qemu-io --aio io_uring: output identical ($(wc -l < qemuio.r.filtered) lines)"
    else
        fail "qemu-io output differs: $(diff qemuio.l.filtered qemuio.r.filtered | head -20)"
    fi
    grep -q 'Pattern verification failed' qemuio.r.out && fail "qemu-io on rsuring: pattern verification failed"
    if cmp -s io.l.raw io.r.raw; then
        echo "  qemu-io --aio io_uring: image written on rsuring is byte-identical"
    else
        fail "qemu-io: images differ"
    fi
    grep -q '^rsuring: pid=' qemuio.r.err || fail "qemu-io: no rsuring: statistics line (rsuring not used?)"
    check_bindings qemuio
fi

# ---- plocate ----------------------------------------------------------------
want plocate plocate plocate
updatedb=$(command -v updatedb.plocate || echo /usr/sbin/updatedb.plocate)
[ -z "$plocate" ] || [ -x "$updatedb" ] || skipped plocate "no $updatedb (Debian package plocate)"
if [ -n "$plocate" ] && [ -x "$updatedb" ] && links plocate "$plocate"; then
    ran=$((ran + 1))
    rm -rf tree && mkdir tree
    for i in $(seq 1 400); do
        d="tree/dir$((i % 23))/sub$((i % 7))"
        mkdir -p "$d"
        : > "$d/file_$i.txt"
        [ $((i % 9)) -eq 0 ] && : > "$d/Report-$i.PDF"
    done
    "$updatedb" -U "$work/tree" -o "$work/plocate.db" -l no
    # /usr/bin/plocate is setgid: the loader would ignore LD_PRELOAD. A copy
    # (same bytes, no setgid bit) runs both sides.
    cp "$plocate" ./plocate.bin
    queries=("file_1" "-i report" "-c sub3" "-r dir1[0-9]/sub2/file_[0-9]*7\.txt$" "-b -l 5 sub" "nothing-matches-this")
    : > plocate.l.all
    : > plocate.r.all
    qi=0
    for q in "${queries[@]}"; do
        qi=$((qi + 1))
        # shellcheck disable=SC2086
        on_liburing "plocate$qi" ./plocate.bin -d "$work/plocate.db" $q || [ $? -eq 1 ]
        # shellcheck disable=SC2086
        on_rsuring "plocate$qi" ./plocate.bin -d "$work/plocate.db" $q || [ $? -eq 1 ] ||
            fail "plocate $q on rsuring: exit $?"
        { echo "== $q"; cat "plocate$qi.l.out"; } >> plocate.l.all
        { echo "== $q"; cat "plocate$qi.r.out"; } >> plocate.r.all
        [ "$qi" -eq 1 ] && check_bindings "plocate$qi"
        rm -f "plocate$qi".bind.*
    done
    if cmp -s plocate.l.all plocate.r.all; then
        echo "  plocate: ${#queries[@]} searches, output identical ($(grep -vc '^==' plocate.r.all) result lines)"
    else
        fail "plocate output differs: $(diff plocate.l.all plocate.r.all | head -20)"
    fi
    [ "$(grep -vc '^==' plocate.r.all)" -gt 50 ] || fail "plocate found almost nothing: $(cat plocate.r.all | head)"
fi

echo "real programs: $ran programs ran, $failures failures, $missing missing"
[ "$failures" -eq 0 ] || exit 1
[ "$missing" -eq 0 ] || exit 77
