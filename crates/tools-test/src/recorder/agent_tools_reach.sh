#!/bin/sh
# The target runner cargo-nextest starts each test binary through while a `test run`
# records which functions each test runs (see llvm.rs). nextest runs one test per process
# (`BINARY --exact NAME ...`): the process's line names its test, and its raw coverage
# profiles, its own and those of every program it starts (an integration test running the
# crate's binary), are named by its process id. `exec` keeps that id.
test=""
previous=""
for arg in "$@"; do
    if [ "$previous" = "--exact" ]; then
        test="$arg"
    fi
    previous="$arg"
done
if [ -n "$test" ]; then
    # nextest sets the test's package folder, as cargo test does: two packages may each
    # have a test binary of the same name.
    printf '%s\t%s\t%s\t%s\n' "$$" "$1" "$CARGO_MANIFEST_DIR" "$test" >> "$AGENT_TOOLS_REACH_OUT-tests.tsv"
fi
LLVM_PROFILE_FILE="$AGENT_TOOLS_REACH_OUT-$$-%p.profraw"
export LLVM_PROFILE_FILE
exec "$@"
