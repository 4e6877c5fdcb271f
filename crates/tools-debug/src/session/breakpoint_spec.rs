//! One breakpoint as the agent asked for it: a line, optionally a condition, a hit
//! condition or a log message (a logpoint prints and does not stop), and the name path it
//! was set by. Turned into DAP's `SourceBreakpoint`, after checking that the adapter said
//! in `initialize` that it supports each of them: an adapter that does not would silently
//! treat a conditional breakpoint as an unconditional one, or a logpoint as a stop.

use std::path::Path;

/// A breakpoint of one file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BreakpointSpec {
    /// The 1-based line.
    pub line: u64,
    /// Stop only when this expression is true (the debuggee's language).
    pub condition: Option<String>,
    /// Stop only when the hit count satisfies this (`3`, `>= 5`, `% 2`: the adapter's syntax).
    pub hit_condition: Option<String>,
    /// Print this (with `{expression}` parts interpolated) instead of stopping.
    pub log_message: Option<String>,
    /// The name path it was set by (`Greeter.greet`), for the answers.
    pub symbol: Option<String>,
}

impl BreakpointSpec {
    /// A plain breakpoint on `line`.
    #[cfg(test)]
    pub fn at(line: u64) -> Self {
        BreakpointSpec {
            line,
            ..Default::default()
        }
    }

    /// What it does besides stopping, for the answers (`if x > 3`, `logs "…"`), with the
    /// name path it was set by.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(s) = &self.symbol {
            parts.push(format!("at {s}"));
        }
        if let Some(c) = &self.condition {
            parts.push(format!("when {c}"));
        }
        if let Some(h) = &self.hit_condition {
            parts.push(format!("hit count {h}"));
        }
        if let Some(m) = &self.log_message {
            parts.push(format!("logs \"{m}\" (does not stop)"));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!(" [{}]", parts.join(", "))
        }
    }

    /// The capability this breakpoint needs that `caps` lacks, named for the model.
    pub fn missing_capability(&self, caps: &dap_types::Capabilities) -> Option<&'static str> {
        if self.condition.is_some() && caps.supports_conditional_breakpoints != Some(true) {
            return Some("conditional breakpoints (`condition`)");
        }
        if self.hit_condition.is_some() && caps.supports_hit_conditional_breakpoints != Some(true) {
            return Some("hit conditions (`hit_condition`)");
        }
        if self.log_message.is_some() && caps.supports_log_points != Some(true) {
            return Some("logpoints (`log_message`)");
        }
        None
    }

    fn to_dap(&self) -> dap_types::SourceBreakpoint {
        dap_types::SourceBreakpoint {
            line: self.line,
            column: None,
            condition: self.condition.clone(),
            hit_condition: self.hit_condition.clone(),
            log_message: self.log_message.clone(),
            mode: None,
        }
    }
}

/// The first breakpoint of `specs` that `caps` cannot honour, as a message for the model.
pub fn unsupported(
    adapter: &str,
    file: &Path,
    specs: &[BreakpointSpec],
    caps: &dap_types::Capabilities,
) -> Option<String> {
    specs.iter().find_map(|s| {
        s.missing_capability(caps).map(|what| {
            format!(
                "{adapter} does not support {what} (it did not say so in `initialize`); the breakpoint at {}:{} \
                 cannot be set as asked — set it without that option",
                file.display(),
                s.line
            )
        })
    })
}

pub(super) fn source_breakpoints(specs: &[BreakpointSpec]) -> Vec<dap_types::SourceBreakpoint> {
    specs.iter().map(BreakpointSpec::to_dap).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_capability_is_named() {
        let caps = dap_types::Capabilities {
            supports_conditional_breakpoints: Some(true),
            ..Default::default()
        };
        let cond = BreakpointSpec {
            condition: Some("x > 1".into()),
            ..BreakpointSpec::at(3)
        };
        assert_eq!(cond.missing_capability(&caps), None);
        let log = BreakpointSpec {
            log_message: Some("x is {x}".into()),
            ..BreakpointSpec::at(4)
        };
        assert_eq!(
            unsupported("lldb", Path::new("a.c"), &[cond.clone(), log], &caps).as_deref(),
            Some(
                "lldb does not support logpoints (`log_message`) (it did not say so in `initialize`); the breakpoint \
                 at a.c:4 cannot be set as asked — set it without that option"
            )
        );
        let hits = BreakpointSpec {
            hit_condition: Some("3".into()),
            symbol: Some("main".into()),
            ..BreakpointSpec::at(5)
        };
        assert_eq!(
            hits.missing_capability(&caps),
            Some("hit conditions (`hit_condition`)")
        );
        assert_eq!(hits.describe(), " [at main, hit count 3]");
        assert_eq!(cond.describe(), " [when x > 1]");
    }
}
