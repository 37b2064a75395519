//! A shell pattern matched against a name: `*` any run of characters,
//! `?` one character, `[abc]`, `[a-z]` and `[!a]` one of a set (what
//! keepalived's `include` takes, through glob(3)).

/// Whether `name` matches `pattern`.
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    walk(&p, &n)
}

fn walk(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|i| walk(&p[1..], &n[i..])),
        Some('?') => !n.is_empty() && walk(&p[1..], &n[1..]),
        Some('[') => match (class(&p[1..]), n.first()) {
            (Some((set, len)), Some(c)) => set(*c) && walk(&p[1 + len..], &n[1..]),
            (None, Some(c)) => *c == '[' && walk(&p[1..], &n[1..]),
            _ => false,
        },
        Some(c) => n.first() == Some(c) && walk(&p[1..], &n[1..]),
    }
}

/// The set after a `[`: a test, and how many characters it took (its
/// `]` included); `None` when it has no `]`.
#[allow(clippy::type_complexity)]
fn class(p: &[char]) -> Option<(Box<dyn Fn(char) -> bool + '_>, usize)> {
    let negate = p.first() == Some(&'!');
    let start = usize::from(negate);
    let end = p.iter().skip(start + 1).position(|c| *c == ']')? + start + 1;
    let body = &p[start..end];
    let test = move |c: char| {
        let mut i = 0;
        let mut hit = false;
        while i < body.len() {
            if i + 2 < body.len() && body[i + 1] == '-' {
                hit |= body[i] <= c && c <= body[i + 2];
                i += 3;
            } else {
                hit |= body[i] == c;
                i += 1;
            }
        }
        hit != negate
    };
    Some((Box::new(test), end + 1))
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn patterns() {
        assert!(matches("*.conf", "a.conf"));
        assert!(!matches("*.conf", "a.confx"));
        assert!(matches("vs-?.conf", "vs-1.conf"));
        assert!(matches("vs-[0-9].conf", "vs-7.conf"));
        assert!(!matches("vs-[!0-9].conf", "vs-7.conf"));
        assert!(matches("[", "["));
    }
}
