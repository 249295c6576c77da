//! Compiling a pattern fragment: the context ladder, the no-ERROR/MISSING rule, the fixed
//! text used to skip files cheaply, and the "unparseable" error.

use ast_grep_core::matcher::{MatcherExt as _, PatternNode};
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::StrDoc;
use ast_grep_core::{Language as _, Matcher as _, Node, NodeMatch, Pattern};
use ast_grep_language::SupportLang;

use crate::budget::{MAX_PATTERN_BYTES, MAX_PATTERN_DEPTH};
use crate::index::subtree_depth;
use crate::lang::{HOLE, Lang, Rung, Tree};

/// A pattern ready to match: the ast-grep pattern, the rung that accepted it, and the texts
/// every match must contain.
pub struct Compiled {
    pub(crate) pattern: Pattern,
    /// The same fragment read in later contexts, when its first reading is a declaration whose
    /// kind depends on where it stands (a Dart local function is a method in a class); a node
    /// matching any reading is a match.
    pub(crate) elsewhere: Vec<Pattern>,
    pub(crate) lang: Lang,
    /// Which rung of the ladder parsed it.
    pub rung: &'static str,
    /// Texts of the pattern's named leaves; a file lacking any of them cannot match.
    pub(crate) literals: Vec<String>,
}

/// Why a pattern was refused: no rung accepted it, or it nests too deep to match safely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Unparseable {
    /// The full message: says "unparseable", names the language, shows where parsing failed.
    pub message: String,
}

/// Compiles `fragment` by trying each rung of the language's ladder in order and keeping the
/// first whose whole tree has no ERROR or MISSING node and in which one node spans the fragment.
/// It recurses once per pattern level (up to [`MAX_PATTERN_DEPTH`]): call it on a thread with a
/// [`STACK_BYTES`](crate::STACK_BYTES) stack, as the tools do.
pub fn compile(fragment: &str, lang: Lang) -> Result<Compiled, Unparseable> {
    compile_with(fragment, lang, true)
}

/// [`compile`] without looking for advice on a refusal, for the advice's own check.
pub(crate) fn compile_without_hint(fragment: &str, lang: Lang) -> Result<Compiled, Unparseable> {
    compile_with(fragment, lang, false)
}

fn compile_with(fragment: &str, lang: Lang, hint: bool) -> Result<Compiled, Unparseable> {
    let fragment = fragment.trim();
    if fragment.is_empty() {
        return Err(Unparseable {
            message: format!("unparseable {} pattern: the pattern is empty", lang.id()),
        });
    }
    if fragment.len() > MAX_PATTERN_BYTES {
        return Err(Unparseable {
            message: format!(
                "the {} pattern is {} KiB, more than the limit of {} KiB; search for a smaller, \
                 characteristic part of the code, with metavariables (`$X`, `$$$ARGS`) for \
                 the rest",
                lang.id(),
                fragment.len().div_ceil(1024),
                MAX_PATTERN_BYTES >> 10
            ),
        });
    }
    let processed = lang.sg().pre_process_pattern(fragment).into_owned();
    let mut first_failure: Option<String> = None;
    let rungs = lang.rungs();
    for (at, rung) in rungs.iter().enumerate() {
        let (pattern, kind) = match read_in(rung, &processed, fragment, lang) {
            Ok(reading) => reading,
            Err(Failure::TooDeep(depth)) => {
                return Err(Unparseable {
                    message: too_deep(depth, lang),
                });
            }
            Err(Failure::Rung(why)) => {
                first_failure.get_or_insert(why);
                continue;
            }
        };
        let mut elsewhere = readings_elsewhere(&rungs[at + 1..], &processed, fragment, lang, &kind);
        elsewhere.extend(as_every_name(&pattern, lang));
        // A file lacking a text cannot match any reading only if every reading has that text.
        let mut literals = Vec::new();
        collect_literals(&pattern.node, lang, &mut literals);
        for other in &elsewhere {
            let mut theirs = Vec::new();
            collect_literals(&other.node, lang, &mut theirs);
            literals.retain(|l| theirs.contains(l));
        }
        literals.sort();
        literals.dedup();
        return Ok(Compiled {
            pattern,
            elsewhere,
            lang,
            rung: rung.name,
            literals,
        });
    }
    let tried: Vec<&str> = rungs.iter().map(|r| r.name).collect();
    let advice = if hint {
        let compiles = |f: &str| compile_without_hint(f, lang).is_ok();
        let body = crate::hint::body_hint(fragment, lang, &compiles);
        format!(
            "{body}{}",
            crate::hint::metavariable_case_hint(fragment, &compiles)
        )
    } else {
        String::new()
    };
    Err(Unparseable {
        message: format!(
            "unparseable {} pattern: no context ({}) parses it as one node without errors. {}{advice}",
            lang.id(),
            tried.join(", "),
            first_failure.unwrap_or_default(),
        ),
    })
}

/// The fragment read in one rung: strictly first, then allowing a list metavariable
/// (`$$$ITEMS` where the grammar wants items or statements) to stand in an ERROR or before a
/// MISSING `;`. Leniency stays within the rung: a later rung's error recovery can yield a clean
/// but meaningless tree (`while ($C) { $$$B }` as a C++ class member), which must not win.
fn read_in(
    rung: &Rung,
    processed: &str,
    fragment: &str,
    lang: Lang,
) -> Result<(Pattern, String), Failure> {
    let mut first_failure = None;
    for lenient in [false, true] {
        let suffixes: &[&str] = if rung.semicolon { &["", ";"] } else { &[""] };
        for suffix in suffixes {
            let attempt = Attempt {
                fragment: processed,
                original: fragment,
                template: rung.template,
                suffix,
                lenient,
            };
            match try_rung(&attempt, lang) {
                Ok(reading) => return Ok(reading),
                Err(Failure::Rung(why)) => {
                    first_failure.get_or_insert(why);
                }
                Err(too_deep) => return Err(too_deep),
            }
        }
    }
    Err(Failure::Rung(first_failure.unwrap_or_default()))
}

/// The readings of a context-bound fragment in the rungs after the one that accepted it, one
/// per kind the language allows for it, so `void $M($$$P) { $$$B }` in Dart also finds methods
/// and top-level functions. Other readings (a Dart call read as an abstract method) are left.
fn readings_elsewhere(
    later: &[Rung],
    processed: &str,
    fragment: &str,
    lang: Lang,
    first_kind: &str,
) -> Vec<Pattern> {
    let allowed = lang.elsewhere(first_kind);
    let mut kinds: Vec<String> = Vec::new();
    let mut found = Vec::new();
    if allowed.is_empty() {
        return found;
    }
    for rung in later {
        if let Ok((pattern, kind)) = read_in(rung, processed, fragment, lang)
            && allowed.contains(&kind.as_str())
            && !kinds.contains(&kind)
        {
            kinds.push(kind);
            found.push(pattern);
        }
    }
    found
}

/// A bare name matches it wherever the grammar gives names a kind of their own: `Config` is
/// an `identifier` in a Rust expression but a `type_identifier` in a type and a
/// `field_identifier` after a dot. One reading per such kind, so searching a name finds every
/// use of it (what a rename left behind, say), as it reads in the code.
fn as_every_name(pattern: &Pattern, lang: Lang) -> Vec<Pattern> {
    use ast_grep_core::tree_sitter::LanguageExt as _;
    let PatternNode::Terminal {
        text,
        is_named: true,
        kind_id,
    } = &pattern.node
    else {
        return Vec::new();
    };
    let ts = lang.sg().get_ts_language();
    let a_name = |k: u16| {
        ts.node_kind_is_named(k)
            && ts
                .node_kind_for_id(k)
                .is_some_and(|n| n.ends_with("identifier"))
    };
    if !a_name(*kind_id) {
        return Vec::new();
    }
    let count = u16::try_from(ts.node_kind_count()).unwrap_or(u16::MAX);
    (0..count)
        .filter(|&k| k != *kind_id && a_name(k))
        .map(|k| {
            let mut other = pattern.clone();
            other.node = PatternNode::Terminal {
                text: text.clone(),
                is_named: true,
                kind_id: k,
            };
            other
        })
        .collect()
}

/// The refusal of a pattern deeper than [`MAX_PATTERN_DEPTH`], with what to do instead.
fn too_deep(depth: usize, lang: Lang) -> String {
    format!(
        "the {} pattern nests {depth} levels deep in its syntax tree, more than the limit of \
         {MAX_PATTERN_DEPTH} (matching recurses once per level). Put a metavariable such as `$X` \
         where the deeply nested part is, and narrow with a second search inside what it \
         captures",
        lang.id()
    )
}

/// Why one rung did not give a pattern.
enum Failure {
    /// This rung does not parse the fragment cleanly; says where, for the error message.
    Rung(String),
    /// It parses, but nests deeper than [`MAX_PATTERN_DEPTH`]; no other rung is tried.
    TooDeep(usize),
}

impl From<String> for Failure {
    fn from(why: String) -> Self {
        Failure::Rung(why)
    }
}

/// One try of the ladder: the fragment in one scaffold, with or without the leniency.
struct Attempt<'a> {
    /// The fragment with `$` replaced by the language's expando character.
    fragment: &'a str,
    /// The fragment as the caller wrote it, for messages.
    original: &'a str,
    template: &'a str,
    suffix: &'a str,
    lenient: bool,
}

/// Parses the fragment inside one scaffold, giving the pattern and its node's kind; Err says
/// where it failed, in fragment coordinates.
fn try_rung(attempt: &Attempt<'_>, lang: Lang) -> Result<(Pattern, String), Failure> {
    let Attempt {
        fragment,
        original,
        template,
        suffix,
        lenient,
    } = *attempt;
    let hole = template.find(HOLE).unwrap_or(0);
    let indent = &template[template[..hole].rfind('\n').map_or(0, |i| i + 1)..hole];
    let embedded = fragment.replace('\n', &format!("\n{indent}"));
    let source = format!(
        "{}{embedded}{suffix}{}",
        &template[..hole],
        &template[hole + HOLE.len()..]
    );
    let tree: Tree = lang.parse(&source);
    let root = tree.root();
    let span = hole..hole + embedded.len();
    // Indentation added inside a multi-line token (a triple-quoted string) would change what
    // the pattern means; such a rung is not used.
    if !indent.is_empty() {
        let inserted: Vec<usize> = embedded
            .match_indices('\n')
            .map(|(i, _)| span.start + i + 1)
            .collect();
        let splits_a_token = root.dfs().any(|n| {
            let r = n.range();
            n.is_leaf() && inserted.iter().any(|&at| r.start < at && at < r.end)
        });
        if splits_a_token {
            return Err(Failure::Rung(
                "Its indentation inside this context would change a multi-line token.".to_string(),
            ));
        }
    }
    // A MISSING token says most precisely what is wrong; otherwise the first ERROR node.
    let is_list = |n: &Node<'_, _>| {
        matches!(
            lang.sg().extract_meta_var(&n.text()),
            Some(MetaVariable::MultiCapture(_) | MetaVariable::Multiple)
        )
    };
    // Lenient: an ERROR that is exactly a list metavariable, or a MISSING token right after
    // one (`{ $$$BODY }` in C wants a `;` after an expression), stands for what it captures.
    let forgiven_error = |n: &Node<'_, _>| lenient && is_list(n);
    let forgiven_missing = |n: &Node<'_, _>| lenient && n.prev().is_some_and(|p| is_list(&p));
    let bad = root
        .dfs()
        .find(|n| n.is_missing() && !forgiven_missing(n))
        .or_else(|| root.dfs().find(|n| n.is_error() && !forgiven_error(n)));
    if let Some(bad) = bad {
        return Err(describe_failure(&bad, original, &embedded, span.start).into());
    }
    // The fragment itself, then with the `;` this rung added, then without a `;` the user
    // wrote where the grammar keeps it as a separate token (a TypeScript class field).
    let with_suffix = span.start..span.end + suffix.len();
    let without_semicolon = span.start..span.end - usize::from(embedded.ends_with(';'));
    let (node, added_semicolon) = [
        (span.clone(), false),
        (with_suffix, !suffix.is_empty()),
        (without_semicolon, false),
    ]
    .iter()
    .find_map(|(s, added)| outermost_spanning(&root, s).map(|n| (n, *added)))
    .ok_or_else(|| {
        "The fragment parses, but as several nodes rather than one; give a single \
         statement, expression or declaration."
            .to_string()
    })?;
    let node = descend_single_children(node);
    let kind = node.kind().to_string();
    // Converting and matching recurse once per level: measure first, with a cursor.
    let depth = subtree_depth(&node);
    if depth > MAX_PATTERN_DEPTH {
        return Err(Failure::TooDeep(depth));
    }
    let mut pattern = Pattern::from(node);
    if added_semicolon && let Some(metavariable) = drop_added_semicolon(&mut pattern.node) {
        // The whole pattern was `$X` made into `$X;`: it stands for any node.
        pattern.node = metavariable;
    }
    if let PatternNode::MetaVar {
        meta_var: MetaVariable::MultiCapture(_) | MetaVariable::Multiple,
    } = pattern.node
    {
        return Err(Failure::Rung(
            "A pattern cannot be only a `$$$` list; put it inside a larger pattern.".to_string(),
        ));
    }
    Ok((pattern, kind))
}

/// The `;` a rung added is the pattern's last token. Where it follows a metavariable, it only
/// made the parse complete, so it is dropped: `if ($C) $S` then takes any statement (a block,
/// a `return`) as `$S`, and `template <$$$T> $D` any declaration. Returns the metavariable when
/// the node itself was just `$X;`, for the caller to put in its place.
fn drop_added_semicolon(node: &mut PatternNode) -> Option<PatternNode> {
    let PatternNode::Internal { children, .. } = node else {
        return None;
    };
    let ends_with_semicolon =
        matches!(children.last(), Some(PatternNode::Terminal { text, .. }) if text == ";");
    if !ends_with_semicolon {
        let last = children.last_mut()?;
        if let Some(metavariable) = drop_added_semicolon(last) {
            *last = metavariable;
        }
        return None;
    }
    let n = children.len();
    if n >= 2 && matches!(children[n - 2], PatternNode::MetaVar { .. }) {
        children.pop();
        if n == 2 {
            return children.pop();
        }
    }
    None
}

/// The outermost node (not the scaffold's root) whose byte range is exactly `span`.
fn outermost_spanning<'r>(
    root: &Node<'r, ast_grep_core::tree_sitter::StrDoc<ast_grep_language::SupportLang>>,
    span: &std::ops::Range<usize>,
) -> Option<Node<'r, ast_grep_core::tree_sitter::StrDoc<ast_grep_language::SupportLang>>> {
    let mut node = root.clone();
    loop {
        let children: Vec<_> = node.children().collect();
        let mut next = None;
        for child in children {
            let r = child.range();
            if r == *span {
                return Some(child);
            }
            if r.start <= span.start && span.end <= r.end && r.len() > span.len() {
                next = Some(child);
                break;
            }
        }
        node = next?;
    }
}

/// Goes down while a node has exactly one child covering the same bytes, as `expr` inside an
/// expression statement, so the pattern matches the expression wherever it occurs.
fn descend_single_children<'r>(
    mut node: Node<'r, ast_grep_core::tree_sitter::StrDoc<ast_grep_language::SupportLang>>,
) -> Node<'r, ast_grep_core::tree_sitter::StrDoc<ast_grep_language::SupportLang>> {
    loop {
        let children: Vec<_> = node.children().collect();
        let [only] = children.as_slice() else {
            return node;
        };
        if only.range() != node.range() {
            return node;
        }
        let only = only.clone();
        node = only;
    }
}

fn describe_failure(
    bad: &Node<'_, ast_grep_core::tree_sitter::StrDoc<ast_grep_language::SupportLang>>,
    original: &str,
    embedded: &str,
    start: usize,
) -> String {
    let what = if bad.is_missing() {
        format!("a missing `{}`", bad.kind())
    } else {
        "unexpected syntax".to_string()
    };
    let end_of_fragment = start + embedded.len();
    // An ERROR that runs to the end of the fragment means it stopped too early: point there.
    let (offset, what) = if !bad.is_missing() && bad.range().end >= end_of_fragment {
        (
            end_of_fragment,
            "the pattern ends before its construct is complete".to_string(),
        )
    } else {
        (bad.range().start, what)
    };
    if offset < start || offset > end_of_fragment {
        return format!("In the first context tried, the scaffold around it broke: {what}.");
    }
    // Map back to the fragment: the embedded copy only adds indentation after newlines, and
    // the expando character replaces `$` one char for one, so columns count chars.
    let Some(in_embedded) = embedded.get(..offset - start) else {
        return format!("In the first context tried, parsing failed ({what}).");
    };
    let line = in_embedded.matches('\n').count();
    let col = in_embedded
        .rsplit('\n')
        .next()
        .map_or(0, |l| l.chars().count());
    let frag_line = original.lines().nth(line).unwrap_or("");
    let embedded_line_chars = embedded.lines().nth(line).map_or(0, |l| l.chars().count());
    let indent_added = embedded_line_chars.saturating_sub(frag_line.chars().count());
    let col = col.saturating_sub(indent_added);
    format!(
        "In the first context tried, parsing failed at line {}, column {} ({what}):\n  {frag_line}\n  {}^",
        line + 1,
        col + 1,
        " ".repeat(col)
    )
}

/// Languages whose keywords are case-sensitive string tokens in their grammar, so an unnamed
/// keyword leaf of a pattern (`raise`, `return`) must occur verbatim in any match.
const VERBATIM_KEYWORDS: &[&str] = &[
    "bash",
    "c",
    "cpp",
    "csharp",
    "dart",
    "elixir",
    "go",
    "java",
    "javascript",
    "kotlin",
    "lua",
    "python",
    "ruby",
    "rust",
    "scala",
    "swift",
    "tsx",
    "typescript",
];

fn collect_literals(node: &PatternNode, lang: Lang, out: &mut Vec<String>) {
    match node {
        PatternNode::Terminal { text, is_named, .. } => {
            let expando = lang.sg().expando_char();
            let usable = !text.trim().is_empty() && !text.contains(expando) && !text.contains('$');
            // Named leaves match by exact text. Unnamed ones match by kind, which for a keyword
            // of these grammars is its verbatim spelling; punctuation filters nothing.
            let keyword = text.len() >= 2
                && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && VERBATIM_KEYWORDS.contains(&lang.id());
            if usable && (*is_named || keyword) {
                out.push(text.clone());
            }
        }
        PatternNode::Internal { children, .. } => {
            for c in children {
                collect_literals(c, lang, out);
            }
        }
        PatternNode::MetaVar { .. } => {}
    }
}

impl Compiled {
    /// Matches `node` against the first reading, then the others.
    pub(crate) fn match_node<'t>(
        &self,
        node: Node<'t, StrDoc<SupportLang>>,
    ) -> Option<NodeMatch<'t, StrDoc<SupportLang>>> {
        std::iter::once(&self.pattern)
            .chain(&self.elsewhere)
            .find_map(|p| p.match_node(node.clone()))
    }

    /// The node kinds a match can have, sorted; None when a reading can match any kind.
    pub(crate) fn kinds(&self) -> Option<Vec<u16>> {
        let mut kinds = Vec::new();
        for p in std::iter::once(&self.pattern).chain(&self.elsewhere) {
            kinds.extend(p.potential_kinds()?.iter().map(|k| k as u16));
        }
        kinds.sort_unstable();
        kinds.dedup();
        Some(kinds)
    }

    /// The same pattern with the fixed-text prefilter switched off, so tests can check that the
    /// prefilter never drops a match.
    #[doc(hidden)]
    pub fn without_prefilter(mut self) -> Self {
        self.literals.clear();
        self
    }

    /// The texts every match must contain (the prefilter).
    pub fn literals(&self) -> &[String] {
        &self.literals
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lang(id: &str) -> Lang {
        Lang::by_id(id).unwrap()
    }

    #[test]
    fn the_ladder_picks_the_first_clean_rung() {
        assert_eq!(
            compile("dispose($X)", lang("dart")).unwrap().rung,
            "statement"
        );
        assert_eq!(
            compile("return $X", lang("python")).unwrap().rung,
            "statement"
        );
        let method = "def $F(self):\n    return $X";
        assert_eq!(compile(method, lang("python")).unwrap().rung, "statement");
        // Indenting would change the string's text, so the unindented rung is used.
        let doc = "x = \"\"\"a\nb\"\"\"";
        assert_eq!(compile(doc, lang("python")).unwrap().rung, "declaration");
        assert_eq!(
            compile("pub fn $F() {}", lang("rust")).unwrap().rung,
            "statement"
        );
        let field = compile("private $X: number = 0;", lang("typescript")).unwrap();
        assert_eq!(field.rung, "class member");
        assert_eq!(
            compile("package $P", lang("go")).unwrap().rung,
            "declaration"
        );
    }

    #[test]
    fn several_nodes_or_errors_anywhere_are_refused() {
        let e = compile("f(); g();", lang("typescript")).err().unwrap();
        assert!(e.message.contains("several nodes"), "{}", e.message);
        // The top node parses, but an inner MISSING token must still reject it.
        let e = compile("foo(a, ", lang("python")).err().unwrap();
        assert!(
            e.message.starts_with("unparseable python pattern"),
            "{}",
            e.message
        );
        let e = compile("   ", lang("rust")).err().unwrap();
        assert!(e.message.contains("empty"), "{}", e.message);
        let e = compile("$$$ITEMS", lang("python")).err().unwrap();
        assert!(e.message.contains("only a `$$$` list"), "{}", e.message);
        // The lenient pass forgives only list metavariables: a missing comma is still an error.
        for (l, p) in [
            ("python", "f($A $B)"),
            ("rust", "let $X = $A $B;"),
            ("javascript", "[$A $B]"),
        ] {
            let e = compile(p, lang(l)).err().unwrap();
            assert!(
                e.message.starts_with(&format!("unparseable {l} pattern")),
                "{}",
                e.message
            );
        }
    }

    /// Runs `f` on a thread with the stack the tools give compilation.
    fn on_tool_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(crate::budget::STACK_BYTES)
                .spawn_scoped(s, f)
                .unwrap()
                .join()
                .unwrap()
        })
    }

    #[test]
    fn patterns_nested_deeper_than_the_limit_are_refused_with_advice() {
        let nested = |n: usize| format!("{}x{}", "(".repeat(n), ")".repeat(n));
        on_tool_stack(|| {
            for l in ["javascript", "python", "c"] {
                let at_limit = compile(&nested(MAX_PATTERN_DEPTH), lang(l));
                assert!(at_limit.is_ok(), "{l}: {:?}", at_limit.err());
                for n in [MAX_PATTERN_DEPTH + 1, 4_000, 30_000] {
                    let e = compile(&nested(n), lang(l)).err().unwrap();
                    assert!(
                        e.message.contains(&format!("nests {n} levels deep"))
                            && e.message.contains("limit of 1000")
                            && e.message.contains("`$X`"),
                        "{}",
                        e.message
                    );
                }
            }
        });
    }

    #[test]
    fn patterns_longer_than_the_limit_are_refused() {
        let args = |n: usize| format!("f({})", vec!["a"; n].join(", "));
        assert!(compile(&args(20_000), lang("python")).is_ok());
        let e = compile(&args(1_000_000), lang("python")).err().unwrap();
        assert!(
            e.message
                .contains("2930 KiB, more than the limit of 64 KiB"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_dart_declaration_matches_in_a_function_a_class_and_at_the_top() {
        let src = "class W {\n  C? a;\n  void m() { C? b; }\n}\nC? c;\nvoid f() {}\n";
        let tree = lang("dart").parse(src);
        let lines = |p: &str| -> Vec<usize> {
            let c = compile(p, lang("dart")).unwrap();
            let mut found: Vec<usize> = tree
                .root()
                .dfs()
                .filter_map(|n| c.match_node(n))
                .map(|m| m.start_pos().line() + 1)
                .collect();
            found.dedup();
            found
        };
        assert_eq!(lines("C? $F;"), [2, 3, 5]);
        assert_eq!(lines("void $F($$$P) { $$$B }"), [3, 6]);
        // A call is not a declaration: it never reads as an abstract method elsewhere.
        assert!(compile("m()", lang("dart")).unwrap().elsewhere.is_empty());
    }

    #[test]
    fn a_bare_name_matches_it_as_a_type_and_a_field_too() {
        let rust = lang("rust");
        let code =
            "struct Config { limit: u32 }\nfn f(c: Config) -> u32 { let limit = c.limit; limit }\n";
        let tree = rust.parse(code);
        let count = |name: &str| {
            let compiled = compile(name, rust).unwrap();
            tree.root()
                .dfs()
                .filter(|n| compiled.match_node(n.clone()).is_some())
                .count()
        };
        // The struct's name and the parameter's type.
        assert_eq!(count("Config"), 2);
        // The field's declaration, the field access, the local and its use.
        assert_eq!(count("limit"), 4);
    }

    #[test]
    fn literals_are_the_fixed_text_of_the_pattern() {
        let c = compile("raise $E($$$ARGS)", lang("python")).unwrap();
        assert_eq!(c.literals(), ["raise"]);
        let c = compile("self.$A = $A", lang("python")).unwrap();
        assert_eq!(c.literals(), ["self"]);
        // PHP keywords are case-insensitive, so they never become literals there.
        let c = compile("echo $X;", lang("php")).unwrap();
        assert!(c.literals().is_empty(), "{:?}", c.literals());
    }
}
