//! The bundled grammars, their ids, and the scaffolds a pattern fragment is parsed inside.

use std::path::Path;

use ast_grep_core::Language as _;
use ast_grep_core::tree_sitter::{LanguageExt as _, StrDoc};
use ast_grep_language::SupportLang;

/// A parsed file or fragment.
pub(crate) type Tree = ast_grep_core::AstGrep<StrDoc<SupportLang>>;

/// Where the fragment goes in a scaffold.
pub(crate) const HOLE: &str = "@@HOLE@@";

/// One rung of the context ladder: a scaffold and whether to also try the fragment with `;`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rung {
    /// statement, expression, class member or declaration.
    pub(crate) name: &'static str,
    /// Source with [`HOLE`] where the fragment goes.
    pub(crate) template: &'static str,
    /// Whether statements of this language end in `;`, so `frag;` is worth a try.
    pub(crate) semicolon: bool,
}

const fn rung(name: &'static str, template: &'static str, semicolon: bool) -> Rung {
    Rung {
        name,
        template,
        semicolon,
    }
}

/// A bundled language: its id, grammar and ladder.
#[derive(Debug, Clone, Copy)]
pub struct Lang {
    id: &'static str,
    sg: SupportLang,
    rungs: &'static [Rung],
    /// Kinds a fragment reads as in an early rung (inside a function body) that are other
    /// kinds in a class or at the top level, where the same fragment must match too: each
    /// first kind with the kinds its later readings may have.
    context_bound: &'static [Bound],
}

impl Lang {
    /// The id the model passes as `language`.
    pub fn id(&self) -> &'static str {
        self.id
    }

    pub(crate) fn sg(&self) -> SupportLang {
        self.sg
    }

    pub(crate) fn rungs(&self) -> &'static [Rung] {
        self.rungs
    }

    /// The kinds a later reading of a fragment first read as `kind` may have (none: it has
    /// no other reading).
    pub(crate) fn elsewhere(&self, kind: &str) -> &'static [&'static str] {
        self.context_bound
            .iter()
            .find(|(first, _)| *first == kind)
            .map_or(&[], |(_, later)| later)
    }

    /// Looks a language up by id (a few common aliases are accepted).
    pub fn by_id(id: &str) -> Option<Lang> {
        let id = match id.to_ascii_lowercase().as_str() {
            "py" => "python".to_string(),
            "rs" => "rust".to_string(),
            "js" | "jsx" => "javascript".to_string(),
            "ts" => "typescript".to_string(),
            "c++" | "cxx" => "cpp".to_string(),
            "c#" | "cs" => "csharp".to_string(),
            "sh" => "bash".to_string(),
            "kt" => "kotlin".to_string(),
            "rb" => "ruby".to_string(),
            "yml" => "yaml".to_string(),
            other => other.to_string(),
        };
        LANGS.iter().find(|l| l.id == id).copied()
    }

    /// The language a file's extension names, if bundled.
    pub fn from_path(path: &Path) -> Option<Lang> {
        let sg = SupportLang::from_path(path)?;
        LANGS.iter().find(|l| l.sg == sg).copied()
    }

    /// Every id, for error messages.
    pub fn ids() -> Vec<&'static str> {
        LANGS.iter().map(|l| l.id).collect()
    }

    pub(crate) fn parse(&self, src: &str) -> Tree {
        self.sg.ast_grep(src)
    }
}

macro_rules! lang {
    ($id:literal, $sg:ident, [$($r:expr),* $(,)?] $(, bound: $b:expr)?) => {
        lang!($id, $sg, &[$($r),*] $(, bound: $b)?)
    };
    ($id:literal, $sg:ident, $rungs:expr) => {
        lang!($id, $sg, $rungs, bound: &[])
    };
    ($id:literal, $sg:ident, $rungs:expr, bound: $bound:expr) => {
        Lang { id: $id, sg: SupportLang::$sg, rungs: $rungs, context_bound: $bound }
    };
}

/// JavaScript, TypeScript and TSX share one ladder.
const JS_RUNGS: &[Rung] = &[
    rung("statement", "function __tether() {\n@@HOLE@@\n}", true),
    rung("expression", "__tether(@@HOLE@@);", false),
    rung("class member", "class __Tether {\n@@HOLE@@\n}", true),
    rung("declaration", "@@HOLE@@", true),
];

/// Java and C# share one ladder.
const JAVA_LIKE_RUNGS: &[Rung] = &[
    rung(
        "statement",
        "class __Tether { void __tether() {\n@@HOLE@@\n} }",
        true,
    ),
    rung(
        "expression",
        "class __Tether { void __tether() { __tether(@@HOLE@@); } }",
        false,
    ),
    rung("class member", "class __Tether {\n@@HOLE@@\n}", true),
    rung("declaration", "@@HOLE@@", true),
];

/// A first reading's kind, and the kinds its readings in later rungs may have.
type Bound = (&'static str, &'static [&'static str]);

/// `count = 0;` in a function is an assignment, in a class a field.
const JS_BOUND: &[Bound] = &[
    (
        "expression_statement",
        &["field_definition", "public_field_definition"],
    ),
    (
        "assignment_expression",
        &["field_definition", "public_field_definition"],
    ),
];

/// `int count;` in a function is a local, in a struct a field.
const C_BOUND: &[Bound] = &[("declaration", &["field_declaration"])];

const C_LIKE_MEMBER: &str = "struct __Tether {\n@@HOLE@@\n};";

static LANGS: &[Lang] = &[
    lang!("bash", Bash, [rung("statement", "@@HOLE@@", false)]),
    lang!(
        "c",
        C,
        [
            rung("statement", "void __tether(void) {\n@@HOLE@@\n}", true),
            rung(
                "expression",
                "void __tether(void) { __tether(@@HOLE@@); }",
                false
            ),
            rung("class member", C_LIKE_MEMBER, true),
            rung("declaration", "@@HOLE@@", true),
        ],
        bound: C_BOUND
    ),
    lang!(
        "cpp",
        Cpp,
        [
            rung("statement", "void __tether() {\n@@HOLE@@\n}", true),
            rung(
                "expression",
                "void __tether() { __tether(@@HOLE@@); }",
                false
            ),
            rung("class member", "class __Tether {\n@@HOLE@@\n};", true),
            rung("declaration", "@@HOLE@@", true),
        ],
        bound: C_BOUND
    ),
    lang!(
        "csharp",
        CSharp,
        JAVA_LIKE_RUNGS,
        bound: &[
            ("local_function_statement", &["method_declaration"]),
            ("local_declaration_statement", &["field_declaration"]),
        ]
    ),
    lang!(
        "css",
        Css,
        [
            rung("class member", "a {\n@@HOLE@@\n}", true),
            rung("declaration", "@@HOLE@@", false),
        ]
    ),
    lang!(
        "dart",
        Dart,
        [
            rung("statement", "void __tether() {\n@@HOLE@@\n}", true),
            rung(
                "expression",
                "void __tether() { __tether(@@HOLE@@); }",
                false
            ),
            rung("class member", "class __Tether {\n@@HOLE@@\n}", true),
            rung("declaration", "@@HOLE@@", true),
        ],
        bound: &[
            (
                "local_function_declaration",
                &["method_declaration", "function_declaration"]
            ),
            (
                "local_variable_declaration",
                &["member_declaration", "top_level_variable_declaration"]
            ),
        ]
    ),
    lang!(
        "elixir",
        Elixir,
        [
            rung("statement", "@@HOLE@@", false),
            rung("expression", "__tether(@@HOLE@@)", false),
            rung("class member", "defmodule Tether do\n@@HOLE@@\nend", false),
        ]
    ),
    lang!(
        "go",
        Go,
        [
            rung(
                "statement",
                "package __tether\nfunc __tether() {\n@@HOLE@@\n}",
                false
            ),
            rung(
                "expression",
                "package __tether\nfunc __tether() { __tether(@@HOLE@@) }",
                false
            ),
            rung(
                "class member",
                "package __tether\ntype __Tether struct {\n@@HOLE@@\n}",
                false
            ),
            rung("declaration", "package __tether\n@@HOLE@@", false),
        ]
    ),
    lang!(
        "haskell",
        Haskell,
        [
            rung("statement", "__tether = do\n  @@HOLE@@", false),
            rung("expression", "__tether = (@@HOLE@@)", false),
            rung("declaration", "@@HOLE@@", false),
        ]
    ),
    lang!("html", Html, [rung("declaration", "@@HOLE@@", false)]),
    lang!(
        "java",
        Java,
        JAVA_LIKE_RUNGS,
        bound: &[("local_variable_declaration", &["field_declaration"])]
    ),
    lang!("javascript", JavaScript, JS_RUNGS, bound: JS_BOUND),
    lang!("json", Json, [rung("declaration", "@@HOLE@@", false)]),
    lang!(
        "kotlin",
        Kotlin,
        [
            rung("statement", "fun __tether() {\n@@HOLE@@\n}", false),
            rung("expression", "fun __tether() { __tether(@@HOLE@@) }", false),
            rung("class member", "class __Tether {\n@@HOLE@@\n}", false),
            rung("declaration", "@@HOLE@@", false),
        ]
    ),
    lang!(
        "lua",
        Lua,
        [
            rung("statement", "function __tether()\n@@HOLE@@\nend", false),
            rung("expression", "__tether(@@HOLE@@)", false),
            rung("declaration", "@@HOLE@@", false),
        ]
    ),
    lang!(
        "php",
        Php,
        [
            rung(
                "statement",
                "<?php\nfunction __tether() {\n@@HOLE@@\n}",
                true
            ),
            rung("expression", "<?php\n__tether(@@HOLE@@);", false),
            rung("class member", "<?php\nclass __Tether {\n@@HOLE@@\n}", true),
            rung("declaration", "<?php\n@@HOLE@@", true),
        ]
    ),
    lang!(
        "python",
        Python,
        [
            rung("statement", "def __tether():\n    @@HOLE@@\n", false),
            rung("expression", "__tether(@@HOLE@@)\n", false),
            rung("class member", "class __Tether:\n    @@HOLE@@\n", false),
            rung("declaration", "@@HOLE@@\n", false),
        ]
    ),
    lang!(
        "ruby",
        Ruby,
        [
            rung("statement", "def __tether\n@@HOLE@@\nend", false),
            rung("expression", "__tether(@@HOLE@@)", false),
            rung("class member", "class Tether__\n@@HOLE@@\nend", false),
            rung("declaration", "@@HOLE@@", false),
        ]
    ),
    lang!(
        "rust",
        Rust,
        [
            rung("statement", "fn __tether() {\n@@HOLE@@\n}", true),
            rung("expression", "fn __tether() { __tether(@@HOLE@@); }", false),
            rung("class member", "impl __Tether {\n@@HOLE@@\n}", false),
            rung("class member", "struct __Tether {\n@@HOLE@@\n}", false),
            rung("declaration", "@@HOLE@@", false),
        ]
    ),
    lang!(
        "scala",
        Scala,
        [
            rung("statement", "def __tether() = {\n@@HOLE@@\n}", false),
            rung("expression", "def __tether() = __tether(@@HOLE@@)", false),
            rung("class member", "class __Tether {\n@@HOLE@@\n}", false),
            rung("declaration", "@@HOLE@@", false),
        ]
    ),
    lang!(
        "swift",
        Swift,
        [
            rung("statement", "func __tether() {\n@@HOLE@@\n}", false),
            rung(
                "expression",
                "func __tether() { __tether(@@HOLE@@) }",
                false
            ),
            rung("class member", "class __Tether {\n@@HOLE@@\n}", false),
            rung("declaration", "@@HOLE@@", false),
        ]
    ),
    lang!("tsx", Tsx, JS_RUNGS, bound: JS_BOUND),
    lang!("typescript", TypeScript, JS_RUNGS, bound: JS_BOUND),
    lang!("yaml", Yaml, [rung("declaration", "@@HOLE@@", false)]),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_required_language_is_bundled() {
        for id in [
            "dart",
            "python",
            "rust",
            "c",
            "cpp",
            "go",
            "javascript",
            "typescript",
            "tsx",
            "java",
            "kotlin",
            "swift",
            "ruby",
            "php",
            "csharp",
            "bash",
            "lua",
            "scala",
            "elixir",
            "haskell",
            "html",
            "css",
            "json",
            "yaml",
        ] {
            let lang = Lang::by_id(id).unwrap_or_else(|| panic!("{id} missing"));
            assert!(!lang.rungs().is_empty());
            let tree = lang.parse("");
            drop(tree);
        }
    }

    /// One snippet and one pattern per bundled language; each must match exactly once, so
    /// every grammar is exercised through the pattern ladder, not only parsed.
    #[test]
    fn every_language_finds_exactly_one_match() {
        let cases: &[(&str, &str, &str)] = &[
            ("dart", "void main() { greet(1); other(2); }", "greet($A)"),
            ("python", "greet(1)\nother(2)\n", "greet($A)"),
            ("rust", "fn main() { greet(1); other(2); }", "greet($A)"),
            ("c", "int main() { greet(1); other(2); }", "greet($A)"),
            ("cpp", "int main() { greet(1); other(2); }", "greet($A)"),
            (
                "go",
                "package m\nfunc f() { greet(1); other(2) }\n",
                "greet($A)",
            ),
            ("javascript", "greet(1); other(2);", "greet($A)"),
            ("typescript", "greet(1); other(2);", "greet($A)"),
            ("tsx", "greet(1); other(2);", "greet($A)"),
            (
                "java",
                "class A { void f() { greet(1); other(2); } }",
                "greet($A)",
            ),
            ("kotlin", "fun f() { greet(1); other(2) }", "greet($A)"),
            ("swift", "greet(1)\nother(2)\n", "greet($A)"),
            ("ruby", "greet(1)\nother(2)\n", "greet($A)"),
            ("php", "<?php greet(1); other(2);", "greet($A)"),
            (
                "csharp",
                "class A { void F() { greet(1); other(2); } }",
                "greet($A)",
            ),
            ("bash", "greet one\nother two\n", "greet $A"),
            ("lua", "greet(1)\nother(2)\n", "greet($A)"),
            ("scala", "object A { greet(1); other(2) }", "greet($A)"),
            ("elixir", "greet(1)\nother(2)\n", "greet($A)"),
            ("haskell", "main = greet 1\nf = other 2\n", "greet $A"),
            ("html", "<p>hi</p><div>yo</div>", "<p>$A</p>"),
            ("css", "a { color: red; } b { margin: 0; }", "color: $V;"),
            ("json", "{\"a\": 1, \"b\": [2]}", "[2]"),
            ("yaml", "a: 1\nb: two\n", "a: $V"),
        ];
        let mut failed = Vec::new();
        for (id, src, pattern) in cases {
            let lang = Lang::by_id(id).unwrap_or_else(|| panic!("{id} missing"));
            let found = match crate::compile(pattern, lang) {
                Ok(c) => lang.parse(src).root().find_all(&c.pattern).count(),
                Err(e) => {
                    failed.push(format!("{id}: {}", e.message));
                    continue;
                }
            };
            if found != 1 {
                failed.push(format!("{id}: {found} matches of {pattern:?} in {src:?}"));
            }
        }
        assert!(failed.is_empty(), "{failed:#?}");
    }

    #[test]
    fn extension_inference() {
        let id = |p: &str| Lang::from_path(Path::new(p)).map(|l| l.id());
        assert_eq!(id("a/b.py"), Some("python"));
        assert_eq!(id("x.tsx"), Some("tsx"));
        assert_eq!(id("x.ts"), Some("typescript"));
        assert_eq!(id("x.dart"), Some("dart"));
        assert_eq!(id("x.unknown"), None);
    }
}
