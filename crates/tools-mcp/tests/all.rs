//! tools-mcp's integration tests: one test binary, the suites in `suite/`.

mod suite;
