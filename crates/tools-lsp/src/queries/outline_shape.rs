//! The shape of a big file's outline: when the depth-first listing does not fit the answer's
//! budget, every top-level symbol is shown first, each with the count of its members, and
//! the members of as many of them as fit are listed under them (in file order, a symbol's
//! members all or none). A 2 600-line module then shows its `ArgumentParser` class even
//! though the listing of the classes before it would fill the budget on its own.
//!
//! `symbol` (a name) narrows an outline to that symbol and its members, wherever it is.

/// Room held back for the closing line that says how to see the rest.
const CLOSING_RESERVE: usize = 240;

/// One outline entry as the shaping sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The display line (indented by depth).
    pub line: String,
    /// The symbol's name.
    pub name: String,
    /// Nesting depth (0 = top level).
    pub depth: usize,
}

/// A top-level symbol and the entries listed under it.
struct Group {
    head: usize,
    members: std::ops::Range<usize>,
}

fn groups(entries: &[Entry]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        match out.last_mut() {
            // An entry under a symbol the filter left out starts a group of its own.
            Some(g) if e.depth > 0 => g.members.end = i + 1,
            _ => out.push(Group {
                head: i,
                members: i + 1..i + 1,
            }),
        }
    }
    out
}

/// An outline cut to its shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// The text: head line, the entries, the closing line.
    pub text: String,
    /// Indices (into the entries) of the entries shown, in order.
    pub shown: Vec<usize>,
    /// The top-level symbols whose members were left out, with how many.
    pub collapsed: Vec<(String, usize)>,
}

/// The outline as its shape within `budget` bytes, or `None` when every entry fits (the
/// plain listing is then the answer) or when the top-level symbols alone do not (the
/// listing is then paged).
pub fn shape(head: &str, entries: &[Entry], budget: usize) -> Option<Shape> {
    let full: usize = head.len() + entries.iter().map(|e| e.line.len() + 1).sum::<usize>();
    if full <= budget {
        return None;
    }
    let groups = groups(entries);
    let collapsed_line = |g: &Group| {
        let n = g.members.len();
        let line = &entries[g.head].line;
        if n == 0 {
            line.clone()
        } else {
            format!("{line}  (+{n} member(s))")
        }
    };
    let limit = budget.saturating_sub(CLOSING_RESERVE);
    let mut used = head.len()
        + groups
            .iter()
            .map(|g| collapsed_line(g).len() + 1)
            .sum::<usize>();
    if used > limit {
        return None;
    }
    let mut expanded = vec![false; groups.len()];
    for (i, g) in groups.iter().enumerate() {
        if g.members.is_empty() {
            continue;
        }
        let grow = entries[g.members.clone()]
            .iter()
            .map(|e| e.line.len() + 1)
            .sum::<usize>()
            + entries[g.head].line.len()
            - collapsed_line(g).len();
        if used + grow <= limit {
            used += grow;
            expanded[i] = true;
        }
    }
    let mut text = head.to_string();
    let mut shown = Vec::new();
    let mut collapsed = Vec::new();
    for (g, open) in groups.iter().zip(&expanded) {
        text.push('\n');
        shown.push(g.head);
        if *open || g.members.is_empty() {
            text.push_str(&entries[g.head].line);
            for m in g.members.clone() {
                text.push('\n');
                text.push_str(&entries[m].line);
                shown.push(m);
            }
        } else {
            text.push_str(&collapsed_line(g));
            collapsed.push((entries[g.head].name.clone(), g.members.len()));
        }
    }
    let hidden: usize = collapsed.iter().map(|(_, n)| n).sum();
    let example = collapsed
        .iter()
        .max_by_key(|(_, n)| *n)
        .map(|(name, _)| name.as_str())
        .unwrap_or_default();
    text.push_str(&format!(
        "\n… {hidden} member(s) of {} symbol(s) not listed — pass `symbol: {example:?}` for one \
         symbol's members, or `offset: 0` for the whole listing page by page",
        collapsed.len()
    ));
    Some(Shape {
        text,
        shown,
        collapsed,
    })
}

/// The entries of every symbol named `name` and of its members, depths counted from it;
/// empty when none is named so.
pub fn within(entries: &[Entry], name: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < entries.len() {
        if entries[i].name == name {
            let depth = entries[i].depth;
            out.push(i);
            i += 1;
            while i < entries.len() && entries[i].depth > depth {
                out.push(i);
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, depth: usize) -> Entry {
        Entry {
            line: format!("{}class {name}  line 1", "  ".repeat(depth)),
            name: name.to_string(),
            depth,
        }
    }

    /// A small class, a big one, a function, a middle-sized class.
    fn module() -> Vec<Entry> {
        let mut v = vec![entry("Small", 0), entry("a", 1)];
        v.push(entry("Big", 0));
        v.extend((0..40).map(|i| entry(&format!("method_{i}"), 1)));
        v.push(entry("helper", 0));
        v.push(entry("Middle", 0));
        v.extend((0..3).map(|i| entry(&format!("m{i}"), 1)));
        v.push(entry("inner", 2));
        v
    }

    #[test]
    fn a_listing_that_fits_is_left_alone() {
        assert_eq!(shape("head", &module(), 100_000), None);
    }

    #[test]
    fn every_top_level_symbol_comes_first_and_members_expand_as_room_allows() {
        let entries = module();
        let s = shape("4 symbol(s) in m.py:", &entries, 900).unwrap();
        let lines: Vec<&str> = s.text.lines().collect();
        assert_eq!(
            lines,
            [
                "4 symbol(s) in m.py:",
                "class Small  line 1",
                "  class a  line 1",
                "class Big  line 1  (+40 member(s))",
                "class helper  line 1",
                "class Middle  line 1",
                "  class m0  line 1",
                "  class m1  line 1",
                "  class m2  line 1",
                "    class inner  line 1",
                "… 40 member(s) of 1 symbol(s) not listed — pass `symbol: \"Big\"` for one symbol's members, or `offset: 0` for the whole listing page by page",
            ]
        );
        assert_eq!(s.collapsed, [("Big".to_string(), 40)]);
        assert_eq!(s.shown.len(), 9);
        assert!(s.text.len() <= 900, "{}", s.text.len());
    }

    #[test]
    fn top_level_symbols_that_alone_overflow_are_paged_instead() {
        let entries: Vec<Entry> = (0..200).map(|i| entry(&format!("f{i}"), 0)).collect();
        assert_eq!(shape("head", &entries, 1000), None);
    }

    #[test]
    fn within_a_name_keeps_the_symbol_and_its_members() {
        let entries = module();
        let picked: Vec<&str> = within(&entries, "Middle")
            .into_iter()
            .map(|i| entries[i].name.as_str())
            .collect();
        assert_eq!(picked, ["Middle", "m0", "m1", "m2", "inner"]);
        assert_eq!(within(&entries, "m1").len(), 1);
        assert!(within(&entries, "Nope").is_empty());
    }
}
