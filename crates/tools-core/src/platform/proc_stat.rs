//! A process's place in the tree (parent, group, session), in the shape Linux's
//! `/proc/PID/stat` gives it; the sweep decides on these facts alone.

/// One line of `/proc/PID/stat`, the fields the sweep needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// The process id.
    pub pid: i32,
    /// Its parent.
    pub ppid: i32,
    /// Its process group.
    pub pgrp: i32,
    /// Its session.
    pub session: i32,
    /// Whether it is a zombie (exited, not yet reaped).
    pub zombie: bool,
}

/// Parses the text of `/proc/PID/stat`. The command name may hold spaces and parentheses,
/// so the fields are counted from its last `)`.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let (head, rest) = text.rsplit_once(')')?;
    let pid = head.split_once('(')?.0.trim().parse().ok()?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some(ProcStat {
        pid,
        ppid,
        pgrp,
        session,
        zombie: state == "Z",
    })
}
