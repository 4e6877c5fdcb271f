//! The `lsp` tool (`lsp_tool`): language-server queries by file, line and symbol. A query
//! is prepared once — the file synced, the position found from a symbol on a line (`query`)
//! — then answered: definitions and references (`locate`), hover (`hover`), a file's outline
//! (`outline`, cut to its shape when big: `outline_shape`), call and type hierarchies (`hierarchy`), workspace symbols
//! (`workspace_symbols`, its searches outliving a call in `search_in_flight`, its first
//! answers while a server loads from `declaration_scan`), answers merged
//! from every server of a file (`co_servers`), the server that answers what a file's own does
//! not offer (`stand_in`), importers outside a narrowed pyright program (`outside_importers`),
//! the TypeScript projects beside a server's root that import the symbol
//! (`sibling_importers`), a Vue component's template uses its servers cannot link
//! (`vue_template`), the servers' status (`status_view`), and diagnostics through
//! `diagnostics` and `checkers`.
//!
//! It promises read-only answers sized to the answer budget, first entries first, each cut
//! saying how to get the rest. It may use `diagnostics`, `checkers`, `servers`, `client`,
//! `answer` and `error`; never the rename.

pub(crate) mod co_servers;
pub(crate) mod declaration_scan;
pub(crate) mod hierarchy;
pub(crate) mod hover;
pub(crate) mod locate;
pub(crate) mod lsp_tool;
pub(crate) mod outline;
pub(crate) mod outline_confirm;
pub(crate) mod outline_shape;
pub(crate) mod outside_importers;
pub(crate) mod query;
pub(crate) mod related_tests;
pub(crate) mod search_in_flight;
pub(crate) mod sibling_importers;
pub(crate) mod stand_in;
pub(crate) mod status_view;
pub(crate) mod vue_template;
pub(crate) mod workspace_symbols;
