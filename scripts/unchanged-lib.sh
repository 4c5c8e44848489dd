# Sourced by the scripts that run one `bvh` binary against another
# (lint-unchanged.sh, diff-unchanged.sh, clean-stream-unchanged.sh): their
# set-up and the one comparison of two runs they share.
#
#   unchanged_init USAGE "$@"   OLD and NEW (the first two arguments, made
#                               absolute), ROOT, CORPUS (BVHKIT_CORPUS or
#                               ../shared/corpus from the repository root),
#                               T (a temporary folder removed at exit), and
#                               the counters n (runs) and bad (differences)
#   same ARGS...                `bvh ARGS` of both binaries: standard output,
#                               standard error, exit code and, with OUTPUT
#                               set, the file each writes through
#                               `-o "$OUTPUT"` (one path for both, so
#                               messages that name it agree) must be the same
#                               bytes; each difference is printed and
#                               counted. Standard input is $STDIN (default
#                               /dev/null); $NEW_ENV (VAR=VALUE words) is set
#                               for the new binary alone. With $TOLERANCE
#                               set (a relative difference, say 1e-9), a
#                               standard output or file that differs only in
#                               numbers within it or within the absolute
#                               $TOLERANCE_ABS (default 0; see
#                               scripts/numbers-close.py) is counted in
#                               `close` instead of `bad`, and the largest
#                               relative and absolute differences kept in
#                               `largest` and `largest_abs`.

unchanged_init() {
    local usage=$1
    OLD=$(realpath "${2:?usage: $usage}")
    NEW=$(realpath "${3:?usage: $usage}")
    ROOT=$(cd "$(dirname "$0")/.." && pwd)
    CORPUS=${BVHKIT_CORPUS:-$ROOT/../shared/corpus}
    [ -d "$CORPUS" ] || { echo "no corpus at $CORPUS" >&2; exit 2; }
    T=$(mktemp -d "/tmp/$(basename "$0" .sh).XXXXXX")
    trap 'rm -rf "$T"' EXIT
    n=0 bad=0 close=0 largest=0 largest_abs=0
}

# Whether the old and new runs' $1 (out or file) differ only in numbers
# within $TOLERANCE (or $TOLERANCE_ABS); `largest` and `largest_abs` keep
# the largest relative and absolute differences seen.
numbers_close() {
    local rel abs
    read -r rel abs < <(python3 "$ROOT/scripts/numbers-close.py" "$TOLERANCE" \
        "$T/o.$1" "$T/n.$1" "${TOLERANCE_ABS:-0}") || return 1
    [ -n "$abs" ] || return 1
    largest=$(python3 -c "print(max($largest, $rel))")
    largest_abs=$(python3 -c "print(max($largest_abs, $abs))")
}

same() {
    n=$((n + 1))
    local tag bin envs x
    for tag in o n; do
        bin=$OLD envs=
        [ $tag = n ] && bin=$NEW envs=${NEW_ENV:-}
        [ -n "${OUTPUT:-}" ] && rm -f "$OUTPUT"
        # shellcheck disable=SC2086 # NEW_ENV is VAR=VALUE words
        env $envs "$bin" "$@" ${OUTPUT:+-o "$OUTPUT"} \
            >"$T/$tag.out" 2>"$T/$tag.err" <"${STDIN:-/dev/null}"
        echo $? >"$T/$tag.rc"
        if [ -n "${OUTPUT:-}" ] && [ -f "$OUTPUT" ]; then
            mv "$OUTPUT" "$T/$tag.file"
        else
            : >"$T/$tag.file"
        fi
    done
    local near=0
    for x in rc out err file; do
        if ! cmp -s "$T/o.$x" "$T/n.$x"; then
            if [ -n "${TOLERANCE:-}" ] && { [ $x = out ] || [ $x = file ]; } && numbers_close $x; then
                near=1
                continue
            fi
            bad=$((bad + 1))
            echo "DIFFERS ($x): ${NEW_ENV:+$NEW_ENV }bvh $*${STDIN:+ < $STDIN}" \
                "(exit $(cat "$T/o.rc") / $(cat "$T/n.rc"))"
            return 0
        fi
    done
    close=$((close + near))
}
