# shellcheck shell=bash
# The executables cargo built, read from its JSON messages
# (`cargo build|test --message-format=json`) on stdin. Sourced by the .ci/
# scripts: `. "$HERE/lib/cargo-executables.bash"`.
#
#   cargo_executables PATTERN   every executable (sorted, each once) of the
#                               compiler artifacts whose JSON line matches the
#                               extended regex PATTERN, e.g.
#                               '"profile":\{[^}]*"test":true' (test harnesses)
#                               or '"kind":\["example"\]'
#   cargo_executable NAME       the executable of the artifact named NAME (the
#                               last one cargo reported); nothing when none
#
# Both print paths, one a line, and never fail: the caller checks what it got.

cargo_executables() {
  grep '"reason":"compiler-artifact"' | grep -E "$1" |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | sort -u
}

cargo_executable() {
  grep '"reason":"compiler-artifact"' | grep "\"name\":\"$1\"" |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n1
}
