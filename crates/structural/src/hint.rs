//! Advice for a refused pattern that is a declaration without its body (`def $F($$$)`), which
//! no grammar accepts and which the parse error alone does not explain.

use crate::lang::Lang;

/// Per language: the keywords that start a declaration needing a body, and what a body
/// written as a list metavariable looks like after the declaration's head. Languages where a
/// bodiless head is itself a declaration (a Rust trait's `fn f();`, a TypeScript overload) are
/// not here: there the pattern compiles and finds those.
const BODIES: &[(&str, Keywords, &str)] = &[
    (
        "python",
        &[("def", "function"), ("class", "class")],
        ": $$$B",
    ),
    (
        "javascript",
        &[("function", "function"), ("class", "class")],
        " { $$$B }",
    ),
    (
        "ruby",
        &[("def", "method"), ("class", "class")],
        " $$$B end",
    ),
    ("lua", &[("function", "function")], " $$$B end"),
    (
        "swift",
        &[("func", "function"), ("class", "class")],
        " { $$$B }",
    ),
];

/// Keywords with the noun the advice uses for what they declare.
type Keywords = &'static [(&'static str, &'static str)];

/// A sentence to add to the "unparseable" error when `fragment` starts a declaration that
/// needs a body and the same fragment with a `$$$B` body does compile (`compiles` is the
/// caller's compiler, so this module need not know it); empty otherwise.
pub(crate) fn body_hint(fragment: &str, lang: Lang, compiles: &dyn Fn(&str) -> bool) -> String {
    let Some((_, keywords, body)) = BODIES.iter().find(|(id, _, _)| *id == lang.id()) else {
        return String::new();
    };
    // The keyword among the words before the parameters, so modifiers (`pub async fn`) may
    // come first.
    let head = fragment.split('(').next().unwrap_or("");
    let Some(noun) = head
        .split_whitespace()
        .find_map(|w| keywords.iter().find(|(k, _)| *k == w).map(|(_, n)| *n))
    else {
        return String::new();
    };
    let with_body = format!("{}{body}", fragment.trim_end());
    if !compiles(&with_body) {
        return String::new();
    }
    let article = if noun.starts_with(|c: char| "aeiou".contains(c)) {
        "An"
    } else {
        "A"
    };
    format!("\n{article} {noun} pattern needs its body: write `{with_body}`.")
}

/// A sentence to add to the "unparseable" error when `fragment` names a metavariable in lower
/// case (`$x`, `$$$args`), which the matcher reads as code: metavariables are upper case.
pub(crate) fn metavariable_case_hint(fragment: &str, compiles: &dyn Fn(&str) -> bool) -> String {
    let mut upper = String::with_capacity(fragment.len());
    let mut lowered = Vec::new();
    let mut rest = fragment;
    while let Some(at) = rest.find('$') {
        upper.push_str(&rest[..at]);
        let after = &rest[at..];
        let dollars = after.len() - after.trim_start_matches('$').len();
        let name_len = after[dollars..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len() - dollars);
        let name = &after[dollars..dollars + name_len];
        if name.starts_with(|c: char| c.is_ascii_lowercase()) {
            lowered.push(format!("{}{name}", &after[..dollars]));
        }
        upper.push_str(&after[..dollars]);
        upper.push_str(&name.to_ascii_uppercase());
        rest = &after[dollars + name_len..];
    }
    upper.push_str(rest);
    let Some(first) = lowered.first() else {
        return String::new();
    };
    let fix = match compiles(&upper) {
        true => format!(" Write `{upper}`."),
        false => String::new(),
    };
    format!(
        "\nMetavariables are upper case (`$X`, `$$$ARGS`): `{first}` is read as code, not as a \
         metavariable.{fix}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(lang: &str, pattern: &str) -> String {
        crate::compile(pattern, Lang::by_id(lang).unwrap())
            .err()
            .unwrap_or_else(|| panic!("{lang} {pattern:?} compiled"))
            .message
    }

    #[test]
    fn a_declaration_without_its_body_is_told_to_add_one() {
        for (lang, pattern, hint) in [
            (
                "python",
                "def $F($$$P)",
                "A function pattern needs its body: write `def $F($$$P): $$$B`.",
            ),
            (
                "python",
                "async def $F($$$)",
                "write `async def $F($$$): $$$B`.",
            ),
            ("python", "class $C", "A class pattern needs its body"),
            (
                "javascript",
                "export function $F($$$P)",
                "write `export function $F($$$P) { $$$B }`",
            ),
            ("ruby", "def $F($$$P)", "A method pattern needs its body"),
            (
                "lua",
                "function $F($$$P)",
                "write `function $F($$$P) $$$B end`",
            ),
            ("swift", "func $F($$$P)", "write `func $F($$$P) { $$$B }`"),
        ] {
            let message = refusal(lang, pattern);
            assert!(
                message.starts_with(&format!("unparseable {lang} pattern"))
                    && message.contains(hint),
                "{lang} {pattern:?}: {message}"
            );
        }
    }

    #[test]
    fn a_lower_case_metavariable_is_told_to_be_upper_case() {
        let message = refusal("rust", "let $x = $$$rest;");
        assert!(
            message.contains("Metavariables are upper case")
                && message.contains("`$x` is read as code")
                && message.contains("Write `let $X = $$$REST;`"),
            "{message}"
        );
        assert!(!refusal("rust", "fn f( {").contains("upper case"));
    }

    #[test]
    fn other_refusals_get_no_body_advice() {
        // A body is there, or adding one would not help: the parse error stands alone.
        for (lang, pattern) in [
            ("python", "def f(:"),
            ("python", "def $F($$$P): return ("),
            ("python", "f($A $B)"),
            ("javascript", "function $F($$$P) {"),
            ("rust", "fn f( {"),
        ] {
            let message = refusal(lang, pattern);
            assert!(!message.contains("needs its body"), "{lang}: {message}");
        }
    }
}
