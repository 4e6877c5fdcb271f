//! Capped lists and visibly cut text: no unbounded output, ever.

/// A list cut to a cap, remembering how many were left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capped<T> {
    /// The items shown.
    pub shown: Vec<T>,
    /// How many items there were in all.
    pub total: usize,
}

impl<T> Capped<T> {
    /// How many were not shown.
    pub fn more(&self) -> usize {
        self.total - self.shown.len()
    }
    /// `"N more not shown"` when some were cut, else `None`.
    pub fn more_line(&self) -> Option<String> {
        more_not_shown(self.shown.len(), self.total)
    }
}

/// `"… N more not shown (of TOTAL)"` when fewer than `total` items were `shown`, else
/// `None`: the closing line of a list cut some other way than by [`cap_list`] (several
/// items on one line).
pub fn more_not_shown(shown: usize, total: usize) -> Option<String> {
    (shown < total).then(|| format!("… {} more not shown (of {total})", total - shown))
}

/// Cuts `text` to about `max_chars` characters, with a marker saying how much was cut —
/// but only when the marker is shorter than what it replaces; otherwise the text is kept
/// whole (a marker longer than the cut hides nothing and costs more).
pub fn shorten(text: &str, max_chars: usize) -> String {
    let count = text.chars().count();
    if count <= max_chars {
        return text.to_string();
    }
    let cut = count - max_chars;
    let marker = format!("… [{cut} more chars]");
    if marker.chars().count() >= cut {
        return text.to_string();
    }
    let kept: String = text.chars().take(max_chars).collect();
    format!("{kept}{marker}")
}

/// Keeps the first `cap` items.
pub fn cap_list<T>(items: impl IntoIterator<Item = T>, cap: usize) -> Capped<T> {
    let mut shown = Vec::new();
    let mut total = 0;
    for item in items {
        if shown.len() < cap {
            shown.push(item);
        }
        total += 1;
    }
    Capped { shown, total }
}

/// Cuts `text` to at most `max_chars` characters, with a visible marker saying how much
/// was cut. Never splits a character.
pub fn cut_text(text: &str, max_chars: usize) -> String {
    let count = text.chars().count();
    if count <= max_chars {
        return text.to_string();
    }
    let kept: String = text.chars().take(max_chars).collect();
    format!("{kept}… [cut: {} more characters]", count - max_chars)
}

/// Keeps the first `max_lines` lines, adding a marker line with how many were cut.
pub fn cut_lines(text: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= max_lines {
        return text.to_string();
    }
    let mut out = lines[..max_lines].join("\n");
    out.push_str(&format!(
        "\n… [cut: {} more lines]",
        lines.len() - max_lines
    ));
    out
}

/// Keeps the head and the tail of `text` (each about `keep / 2` characters) with a marker
/// in the middle saying how much was cut. For process output, where both ends matter.
pub fn head_tail(text: &str, keep: usize) -> String {
    let count = text.chars().count();
    if count <= keep {
        return text.to_string();
    }
    let half = keep / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(count - half).collect();
    format!("{head}\n… [cut: {} characters] …\n{tail}", count - 2 * half)
}

/// A byte buffer that keeps the first `head_cap` bytes and a rolling tail of `tail_cap`
/// bytes, counting what it dropped. Memory stays bounded whatever is pushed into it.
#[derive(Debug, Clone)]
pub struct BoundedBuffer {
    head: Vec<u8>,
    tail: std::collections::VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    dropped: u64,
}

impl BoundedBuffer {
    /// A buffer keeping `head_cap` bytes from the start and `tail_cap` from the end.
    pub fn new(head_cap: usize, tail_cap: usize) -> Self {
        BoundedBuffer {
            head: Vec::new(),
            tail: Default::default(),
            head_cap,
            tail_cap,
            dropped: 0,
        }
    }
    /// Appends bytes.
    pub fn push(&mut self, mut bytes: &[u8]) {
        if self.head.len() < self.head_cap {
            let n = (self.head_cap - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        if bytes.len() > self.tail_cap {
            let skip = bytes.len() - self.tail_cap;
            self.dropped += (self.tail.len() + skip) as u64;
            self.tail.clear();
            bytes = &bytes[skip..];
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        for _ in 0..overflow {
            self.tail.pop_front();
        }
        self.dropped += overflow as u64;
        self.tail.extend(bytes);
    }
    /// Bytes dropped between head and tail.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
    /// Whether nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.head.is_empty() && self.tail.is_empty()
    }
    /// The kept text (lossy UTF-8) with a marker where bytes were dropped.
    pub fn to_text(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.head).into_owned();
        if self.dropped > 0 {
            s.push_str(&format!("\n… [cut: {} bytes] …\n", self.dropped));
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        s.push_str(&String::from_utf8_lossy(&tail));
        s
    }
    /// The last `n` lines of the kept text.
    pub fn last_lines(&self, n: usize) -> String {
        let text = self.to_text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_and_cuts() {
        let c = cap_list(0..10, 3);
        assert_eq!(c.shown, vec![0, 1, 2]);
        assert_eq!(c.more(), 7);
        assert!(c.more_line().unwrap().contains("7 more not shown"));
        assert_eq!(cut_text("héllo", 10), "héllo");
        assert_eq!(cut_text("héllo", 2), "hé… [cut: 3 more characters]");
        assert!(cut_lines("a\nb\nc", 1).ends_with("[cut: 2 more lines]"));
        assert!(head_tail(&"x".repeat(100), 10).contains("cut: 90"));
    }

    #[test]
    fn bounded_buffer_stays_bounded() {
        let mut b = BoundedBuffer::new(4, 4);
        for _ in 0..1000 {
            b.push(b"0123456789");
        }
        assert_eq!(b.dropped(), 10_000 - 8);
        let t = b.to_text();
        assert!(t.starts_with("0123"));
        assert!(t.ends_with("6789"));
    }
}
