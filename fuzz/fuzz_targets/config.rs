//! `agent-tools.toml` from a repository: any text parses or is refused, and an untrusted
//! run's filtering of program keys never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(config) = tools_core::Config::parse(text)
    {
        let config = config.with_origin(true).for_trust(false);
        let _ = config.ignored_keys();
        for section in ["lsp", "ast", "eval", "debug", "serve", "trust"] {
            let _ = config.raw_section(section);
        }
    }
});
