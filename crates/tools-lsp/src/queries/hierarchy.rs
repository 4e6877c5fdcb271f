//! Call and type hierarchies: who calls a function, what it calls, a type's supertypes and
//! subtypes — followed to a `depth` (1 to 3) without visiting a node twice.
//!
//! The protocol answers one level per request (`callHierarchy/incomingCalls`, …) starting
//! from an item the server prepares at a position. A walk asks level after level, depth
//! first, so the answer reads as a tree; a node met again (recursion, a diamond of callers)
//! is shown once more, marked, and not followed again, so a cycle cannot grow the answer.
//! The walk is bounded in entries and requests: a widely called function at depth 3 would
//! otherwise cost thousands of round trips.

use std::collections::HashSet;

use lsp_types::request::{
    CallHierarchyIncomingCalls, CallHierarchyOutgoingCalls, CallHierarchyPrepare, Request,
};
use lsp_types::{
    CallHierarchyIncomingCallsParams, CallHierarchyItem, CallHierarchyOutgoingCallsParams,
    CallHierarchyPrepareParams, CallHierarchyServerCapability, PartialResultParams, Position,
    Range, SymbolKind, SymbolTag, TextDocumentPositionParams, TypeHierarchyPrepareParams, Uri,
    WorkDoneProgressParams,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::answer::format::{Renderer, kind_name};
use crate::client::{LspClient, uri_to_path};
use crate::error::LspError;

/// The deepest a walk may go.
pub const MAX_DEPTH: usize = 3;
/// Most entries one walk collects before it stops.
const MAX_WALK_ENTRIES: usize = 500;
/// Most requests one walk sends before it stops.
const MAX_WALK_REQUESTS: usize = 150;
/// Call sites named per entry.
const SITES_SHOWN: usize = 4;

/// Which way a hierarchy is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The functions that call this one.
    IncomingCalls,
    /// The functions this one calls.
    OutgoingCalls,
    /// The types this one extends or implements.
    Supertypes,
    /// The types that extend or implement this one.
    Subtypes,
}

impl Direction {
    /// Whether this is a call hierarchy (else a type hierarchy).
    pub fn is_call(self) -> bool {
        matches!(self, Direction::IncomingCalls | Direction::OutgoingCalls)
    }

    /// What the answer lists, in words.
    pub fn what(self) -> &'static str {
        match self {
            Direction::IncomingCalls => "incoming calls",
            Direction::OutgoingCalls => "outgoing calls",
            Direction::Supertypes => "supertypes",
            Direction::Subtypes => "subtypes",
        }
    }

    /// The capability's name, for the "does not support" line.
    pub fn capability(self) -> &'static str {
        if self.is_call() {
            "call hierarchy"
        } else {
            "type hierarchy"
        }
    }

    fn arrow(self) -> &'static str {
        match self {
            Direction::IncomingCalls => "←",
            Direction::OutgoingCalls => "→",
            Direction::Supertypes => "↑",
            Direction::Subtypes => "↓",
        }
    }

    /// Whether `client` announced the capability this direction needs.
    pub fn supported_by(self, client: &LspClient) -> bool {
        if self.is_call() {
            !matches!(
                client.caps.call_hierarchy_provider,
                None | Some(CallHierarchyServerCapability::Simple(false))
            )
        } else {
            client.type_hierarchy
        }
    }
}

/// A type hierarchy item as servers send it. lsp-types 0.97 types `tags` as a single tag
/// where the protocol has an array, so its own item fails to decode a tagged answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeItem {
    /// The type's name.
    pub name: String,
    /// Its kind.
    pub kind: SymbolKind,
    /// Tags (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<SymbolTag>>,
    /// More detail, such as the declaration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Its file.
    pub uri: Uri,
    /// The whole declaration.
    pub range: Range,
    /// The name in it.
    pub selection_range: Range,
    /// Server data to hand back unchanged in the follow-up requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// The parameters of `typeHierarchy/supertypes` and `typeHierarchy/subtypes`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TypeItemParams {
    /// The item to expand.
    pub item: TypeItem,
    /// Progress token (unused).
    #[serde(flatten)]
    pub work_done_progress_params: WorkDoneProgressParams,
    /// Partial results token (unused).
    #[serde(flatten)]
    pub partial_result_params: PartialResultParams,
}

/// `textDocument/prepareTypeHierarchy`, answered with [`TypeItem`]s.
#[derive(Debug)]
pub enum PrepareTypeHierarchy {}
impl Request for PrepareTypeHierarchy {
    type Params = TypeHierarchyPrepareParams;
    type Result = Option<Vec<TypeItem>>;
    const METHOD: &'static str = "textDocument/prepareTypeHierarchy";
}

/// `typeHierarchy/supertypes`.
#[derive(Debug)]
pub enum Supertypes {}
impl Request for Supertypes {
    type Params = TypeItemParams;
    type Result = Option<Vec<TypeItem>>;
    const METHOD: &'static str = "typeHierarchy/supertypes";
}

/// `typeHierarchy/subtypes`.
#[derive(Debug)]
pub enum Subtypes {}
impl Request for Subtypes {
    type Params = TypeItemParams;
    type Result = Option<Vec<TypeItem>>;
    const METHOD: &'static str = "typeHierarchy/subtypes";
}

/// One node of a hierarchy.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A function or method.
    Call(CallHierarchyItem),
    /// A type.
    Type(TypeItem),
}

impl Node {
    /// Its name.
    pub fn name(&self) -> &str {
        match self {
            Node::Call(i) => &i.name,
            Node::Type(i) => &i.name,
        }
    }
    /// Its kind.
    pub fn kind(&self) -> SymbolKind {
        match self {
            Node::Call(i) => i.kind,
            Node::Type(i) => i.kind,
        }
    }
    /// Its file.
    pub fn uri(&self) -> &Uri {
        match self {
            Node::Call(i) => &i.uri,
            Node::Type(i) => &i.uri,
        }
    }
    /// Where its name is.
    pub fn start(&self) -> Position {
        match self {
            Node::Call(i) => i.selection_range.start,
            Node::Type(i) => i.selection_range.start,
        }
    }
    fn key(&self) -> (String, u32, u32, String) {
        let p = self.start();
        (
            self.uri().as_str().to_string(),
            p.line,
            p.character,
            self.name().to_string(),
        )
    }
}

/// One line of a walk: a node, how deep it is, and where the calls between it and its
/// parent are.
#[derive(Debug, Clone)]
pub struct Entry {
    /// 0 for the item prepared at the position, then one more per level.
    pub depth: usize,
    /// The node.
    pub node: Node,
    /// Call sites between parent and node (call hierarchies only).
    pub sites: Vec<Range>,
    /// The file the call sites are in.
    pub sites_uri: Option<Uri>,
    /// Whether the node was already shown higher up (it is then not followed again).
    pub repeated: bool,
}

/// The result of a walk.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    /// The entries, depth first, in the order they are shown.
    pub entries: Vec<Entry>,
    /// Whether the walk stopped at its entry or request bound before the requested depth.
    pub stopped_early: bool,
    /// Requests sent.
    pub requests: usize,
}

/// Asks `client` for the hierarchy items at `at` (retrying while a young server answers
/// empty).
pub async fn prepare(
    client: &LspClient,
    direction: Direction,
    at: &TextDocumentPositionParams,
) -> Result<Vec<Node>, LspError> {
    if direction.is_call() {
        let params = CallHierarchyPrepareParams {
            text_document_position_params: at.clone(),
            work_done_progress_params: WorkDoneProgressParams::default(),
        };
        let items = crate::queries::query::with_warmup(
            client,
            |v: &Option<Vec<CallHierarchyItem>>| v.as_ref().is_none_or(Vec::is_empty),
            || {
                crate::queries::query::asking_again(|| {
                    client.request::<CallHierarchyPrepare>(params.clone())
                })
            },
        )
        .await?;
        Ok(items
            .unwrap_or_default()
            .into_iter()
            .map(Node::Call)
            .collect())
    } else {
        let params = TypeHierarchyPrepareParams {
            text_document_position_params: at.clone(),
            work_done_progress_params: WorkDoneProgressParams::default(),
        };
        let items = crate::queries::query::with_warmup(
            client,
            |v: &Option<Vec<TypeItem>>| v.as_ref().is_none_or(Vec::is_empty),
            || {
                crate::queries::query::asking_again(|| {
                    client.request::<PrepareTypeHierarchy>(params.clone())
                })
            },
        )
        .await?;
        Ok(items
            .unwrap_or_default()
            .into_iter()
            .map(Node::Type)
            .collect())
    }
}

/// A child of a node: the node, its call sites and the file they are in.
type Child = (Node, Vec<Range>, Option<Uri>);

async fn children_once(
    client: &LspClient,
    direction: Direction,
    node: &Node,
) -> Result<Vec<Child>, LspError> {
    let mut out: Vec<Child> = match (direction, node) {
        (Direction::IncomingCalls, Node::Call(item)) => client
            .request::<CallHierarchyIncomingCalls>(CallHierarchyIncomingCallsParams {
                item: item.clone(),
                work_done_progress_params: WorkDoneProgressParams::default(),
                partial_result_params: PartialResultParams::default(),
            })
            .await?
            .unwrap_or_default()
            .into_iter()
            .map(|c| {
                let uri = c.from.uri.clone();
                (Node::Call(c.from), c.from_ranges, Some(uri))
            })
            .collect(),
        (Direction::OutgoingCalls, Node::Call(item)) => client
            .request::<CallHierarchyOutgoingCalls>(CallHierarchyOutgoingCallsParams {
                item: item.clone(),
                work_done_progress_params: WorkDoneProgressParams::default(),
                partial_result_params: PartialResultParams::default(),
            })
            .await?
            .unwrap_or_default()
            .into_iter()
            // The sites of an outgoing call are in the caller's file.
            .map(|c| (Node::Call(c.to), c.from_ranges, Some(item.uri.clone())))
            .collect(),
        (Direction::Supertypes | Direction::Subtypes, Node::Type(item)) => {
            let params = TypeItemParams {
                item: item.clone(),
                work_done_progress_params: WorkDoneProgressParams::default(),
                partial_result_params: PartialResultParams::default(),
            };
            let items = if direction == Direction::Supertypes {
                client.request::<Supertypes>(params).await?
            } else {
                client.request::<Subtypes>(params).await?
            };
            items
                .unwrap_or_default()
                .into_iter()
                .map(|t| (Node::Type(t), Vec::new(), None))
                .collect()
        }
        _ => Vec::new(),
    };
    // Servers answer in no stated order; a stable one makes pages and repeats predictable.
    out.sort_by_key(|(n, _, _)| n.key());
    for (_, sites, _) in &mut out {
        sites.sort_by_key(|r| (r.start.line, r.start.character));
        sites.dedup();
    }
    Ok(out)
}

/// Follows `direction` from `roots` down to `depth` levels, depth first, each node followed
/// once.
pub async fn walk(
    client: &LspClient,
    direction: Direction,
    roots: Vec<Node>,
    depth: usize,
) -> Result<Walk, LspError> {
    let depth = depth.clamp(1, MAX_DEPTH);
    let mut seen: HashSet<(String, u32, u32, String)> = roots.iter().map(Node::key).collect();
    let mut walk = Walk::default();
    // Depth first with an explicit stack, so the entries come out in tree order.
    let mut stack: Vec<Entry> = roots
        .into_iter()
        .rev()
        .map(|node| Entry {
            depth: 0,
            node,
            sites: Vec::new(),
            sites_uri: None,
            repeated: false,
        })
        .collect();
    while let Some(entry) = stack.pop() {
        if walk.entries.len() >= MAX_WALK_ENTRIES {
            walk.stopped_early = true;
            break;
        }
        let follow = !entry.repeated && entry.depth < depth;
        let node = entry.node.clone();
        let level = entry.depth;
        walk.entries.push(entry);
        if !follow {
            continue;
        }
        if walk.requests >= MAX_WALK_REQUESTS {
            walk.stopped_early = true;
            continue;
        }
        walk.requests += 1;
        let ask =
            || crate::queries::query::asking_again(|| children_once(client, direction, &node));
        let children = if level == 0 {
            // The first level of a young server may be empty only because it is loading.
            crate::queries::query::with_warmup(client, Vec::is_empty, ask).await?
        } else {
            ask().await?
        };
        let mut next = Vec::with_capacity(children.len());
        for (child, sites, sites_uri) in children {
            let repeated = !seen.insert(child.key());
            next.push(Entry {
                depth: level + 1,
                node: child,
                sites,
                sites_uri,
                repeated,
            });
        }
        stack.extend(next.into_iter().rev());
    }
    Ok(walk)
}

/// One entry as a display line and as JSON.
pub fn entry_line(r: &mut Renderer, direction: Direction, e: &Entry) -> (String, Value) {
    let point = uri_to_path(e.node.uri()).map(|p| r.point(&p, e.node.start()));
    let loc = point.as_ref().map(|p| p.loc()).unwrap_or_default();
    let indent = "  ".repeat(e.depth);
    let arrow = if e.depth == 0 {
        String::new()
    } else {
        format!("{} ", direction.arrow())
    };
    let mut lines: Vec<u32> = e.sites.iter().map(|s| s.start.line + 1).collect();
    lines.dedup();
    // Several calls on one line are named once, with how many there are.
    let calls = if e.sites.len() > lines.len() {
        format!(" ({} calls)", e.sites.len())
    } else {
        String::new()
    };
    let sites = match lines.as_slice() {
        [] => String::new(),
        [one] => format!(" — {} line {one}{calls}", site_verb(direction)),
        many => {
            let shown: Vec<String> = many.iter().take(SITES_SHOWN).map(u32::to_string).collect();
            let more = many.len().saturating_sub(SITES_SHOWN);
            format!(
                " — {} lines {}{}{calls}",
                site_verb(direction),
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        }
    };
    let repeated = if e.repeated {
        " [repeated: see above]"
    } else {
        ""
    };
    let text = format!(
        "{indent}{arrow}{} {}  {loc}{sites}{repeated}",
        kind_name(e.node.kind()),
        e.node.name()
    );
    let site_points: Vec<Value> = match e.sites_uri.as_ref().and_then(uri_to_path) {
        Some(path) => e
            .sites
            .iter()
            .map(|s| r.point(&path, s.start).json())
            .collect(),
        None => Vec::new(),
    };
    let json = serde_json::json!({
        "depth": e.depth,
        "name": e.node.name(),
        "kind": kind_name(e.node.kind()),
        "location": point.map(|p| p.json()),
        "call_sites": site_points,
        "repeated": e.repeated,
    });
    (text, json)
}

fn site_verb(direction: Direction) -> &'static str {
    match direction {
        // An incoming entry is the caller: the sites are in its own file.
        Direction::IncomingCalls => "calls it at",
        // An outgoing entry is the callee: the sites are in the parent's file.
        _ => "called at",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tagged_type_item_decodes() {
        let v = serde_json::json!({
            "name": "Box", "kind": 5, "tags": [1], "uri": "file:///a.cpp",
            "range": {"start": {"line": 1, "character": 0}, "end": {"line": 3, "character": 1}},
            "selectionRange": {"start": {"line": 1, "character": 6}, "end": {"line": 1, "character": 9}},
            "data": {"symbolID": "X"}
        });
        let item: TypeItem = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(item.tags, Some(vec![SymbolTag::DEPRECATED]));
        // The server's data goes back unchanged.
        assert_eq!(serde_json::to_value(&item).unwrap()["data"], v["data"]);
    }
}
