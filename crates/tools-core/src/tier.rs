//! Approval tiers and the surfaces they gate.

use serde::{Deserialize, Serialize};

/// What a tool may do. Ordered: `Read < Write < Exec`.
///
/// The tier decides which surfaces see a tool at all, not only whether it asks for approval.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// No side effects.
    Read,
    /// Changes files.
    Write,
    /// Starts or controls a process.
    Exec,
}

impl Tier {
    /// The lowercase name used in schemas and listings.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Read => "read",
            Tier::Write => "write",
            Tier::Exec => "exec",
        }
    }
}

impl std::fmt::Display for Tier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A view of the registry capped at a tier: tools above `max_tier` are absent from it —
/// not listed and not callable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Surface {
    /// `full`, `plan` or `read-only`.
    pub name: &'static str,
    /// The highest tier this surface sees.
    pub max_tier: Tier,
}

impl Surface {
    /// Everything: read, write and exec tools.
    pub const FULL: Surface = Surface {
        name: "full",
        max_tier: Tier::Exec,
    };
    /// Plan mode: read tools only.
    pub const PLAN: Surface = Surface {
        name: "plan",
        max_tier: Tier::Read,
    };
    /// Read-only subagents: read tools only.
    pub const READ_ONLY: Surface = Surface {
        name: "read-only",
        max_tier: Tier::Read,
    };

    /// All known surfaces.
    pub const ALL: [Surface; 3] = [Surface::FULL, Surface::PLAN, Surface::READ_ONLY];

    /// Parses `full`, `plan` or `read-only` (also `read_only`, `readonly`).
    pub fn parse(name: &str) -> Option<Surface> {
        match name {
            "full" => Some(Surface::FULL),
            "plan" => Some(Surface::PLAN),
            "read-only" | "read_only" | "readonly" => Some(Surface::READ_ONLY),
            _ => None,
        }
    }

    /// Whether a tool of `tier` is visible on this surface.
    pub fn allows(&self, tier: Tier) -> bool {
        tier <= self.max_tier
    }
}

impl std::fmt::Display for Surface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_and_read_only_see_only_read_tools() {
        for s in [Surface::PLAN, Surface::READ_ONLY] {
            assert!(s.allows(Tier::Read));
            assert!(!s.allows(Tier::Write));
            assert!(!s.allows(Tier::Exec));
        }
        assert!(Surface::FULL.allows(Tier::Exec));
        assert_eq!(Surface::parse("read-only"), Some(Surface::READ_ONLY));
        assert_eq!(Surface::parse("bogus"), None);
    }
}
