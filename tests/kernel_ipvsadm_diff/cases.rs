//! The case file (tests/ipvsadm_cases/cases.txt) and its parser.

/// The cases, grouped by "=== group" lines.
pub const CASES: &str = include_str!("../ipvsadm_cases/cases.txt");

#[derive(Debug, Clone, Default)]
pub struct Case {
    pub name: String,
    pub samens: bool,
    pub nobody: bool,
    pub setup: Vec<Vec<String>>,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, Default)]
pub struct Step {
    pub args: Vec<String>,
    pub stdin: Option<String>,
}

pub fn split_words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quoted = false;
    for c in s.chars() {
        if quoted {
            if c == '\'' {
                quoted = false;
            } else {
                cur.push(c);
            }
            continue;
        }
        match c {
            '\'' => {
                quoted = true;
                in_word = true;
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

pub fn parse_cases(text: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("== ") {
            let mut words = rest.split_whitespace();
            let mut case = Case::default();
            let mut name = Vec::new();
            for w in words.by_ref() {
                match w {
                    "[samens]" => case.samens = true,
                    "[nobody]" => case.nobody = true,
                    w => name.push(w),
                }
            }
            case.name = name.join(" ");
            cases.push(case);
        } else if let Some(rest) = line.strip_prefix("! ") {
            cases.push(Case {
                name: rest.to_owned(),
                steps: vec![Step {
                    args: split_words(rest),
                    stdin: None,
                }],
                ..Case::default()
            });
        } else if let Some(rest) = line.strip_prefix("> ") {
            cases
                .last_mut()
                .expect("setup outside a case")
                .setup
                .push(split_words(rest));
        } else if let Some(rest) = line.strip_prefix("$") {
            cases
                .last_mut()
                .expect("step outside a case")
                .steps
                .push(Step {
                    args: split_words(rest),
                    stdin: None,
                });
        } else if line == "|<no-eol>" {
            let step = cases
                .last_mut()
                .and_then(|c| c.steps.last_mut())
                .expect("stdin outside a step");
            if let Some(s) = step.stdin.as_mut() {
                s.pop();
            }
        } else if let Some(rest) = line.strip_prefix("|") {
            let step = cases
                .last_mut()
                .and_then(|c| c.steps.last_mut())
                .expect("stdin outside a step");
            let s = step.stdin.get_or_insert_with(String::new);
            s.push_str(rest.strip_prefix(' ').unwrap_or(rest));
            s.push('\n');
        }
    }
    cases
}

/// The cases of group `group` (the lines after `=== group`).
pub fn file_cases(group: &str) -> Vec<Case> {
    // Groups are the cases between "=== group" markers.
    let mut current = String::new();
    let mut text = String::new();
    for line in CASES.lines() {
        if let Some(g) = line.strip_prefix("=== ") {
            current = g.trim().to_owned();
            continue;
        }
        if current == group {
            text.push_str(line);
            text.push('\n');
        }
    }
    let cases = parse_cases(&text);
    assert!(!cases.is_empty(), "no cases in group {group}");
    cases
}
