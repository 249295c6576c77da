//! The modules a Python file imports, read from its import statements alone: a file that only
//! mentions a module's name in a comment, a string or a variable, or imports a module of the
//! same name from another package, does not depend on it, and asking a server about it
//! costs the server an analysis per write.

use std::path::{Component, Path, PathBuf};

/// One module a file may load, as far as a change to another file could matter to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Load {
    /// An absolute import's dotted name (with the imported name, which may be a submodule),
    /// resolved against whatever roots the server searches: any file whose path ends with
    /// one of its leading parts may be what it loads.
    Dotted(Vec<String>),
    /// A relative import resolved against the importing file's folder: the path it names,
    /// without an extension; the file there, and every package above it, may be loaded.
    Under(PathBuf),
}

/// A Python file as imports name it: its module path (its folder for a package's
/// `__init__`) and that path's names, a stub package's folder (`foo-stubs`) read as `foo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Module {
    path: PathBuf,
    names: Vec<String>,
}

impl Module {
    /// The module `path` is imported as; `None` for a file that is not Python.
    pub(crate) fn of(path: &Path) -> Option<Module> {
        if !is_python(path) {
            return None;
        }
        let path = match path.file_stem().and_then(|s| s.to_str()) {
            Some("__init__") => path.parent()?.to_path_buf(),
            _ => path.with_extension(""),
        };
        let names = path
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => name.to_str(),
                _ => None,
            })
            .map(|name| name.strip_suffix("-stubs").unwrap_or(name).to_string())
            .collect();
        Some(Module { path, names })
    }

    /// The Python modules among `files`.
    pub(crate) fn all(files: &[PathBuf]) -> Vec<Module> {
        files.iter().filter_map(|f| Module::of(f)).collect()
    }
}

/// Whether `path` is a Python source or stub file.
pub(crate) fn is_python(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("py" | "pyi")
    )
}

impl Load {
    /// Whether this import may load `module`.
    pub(crate) fn may_load(&self, module: &Module) -> bool {
        match self {
            // The module is `parts[..j]` for some j when its last j names are those.
            Load::Dotted(parts) => {
                let names = &module.names;
                (1..=parts.len().min(names.len())).any(|j| names[names.len() - j..] == parts[..j])
            }
            Load::Under(path) => path.starts_with(&module.path),
        }
    }

    /// The names this import holds, for the index of words: a dotted name's parts, or the
    /// relative path's folder names below `root`.
    pub(crate) fn words<'a>(&'a self, root: &'a Path) -> Box<dyn Iterator<Item = &'a str> + 'a> {
        match self {
            Load::Dotted(parts) => Box::new(parts.iter().map(String::as_str)),
            Load::Under(path) => Box::new(
                path.strip_prefix(root)
                    .unwrap_or(path)
                    .components()
                    .filter_map(|c| match c {
                        Component::Normal(name) => name.to_str(),
                        _ => None,
                    }),
            ),
        }
    }
}

/// What the file at `path` with `text` imports: every `import` and `from … import` statement,
/// relative ones resolved against the file's folder.
pub(crate) fn loads(path: &Path, text: &str) -> Vec<Load> {
    let folder = path.parent().unwrap_or(Path::new(""));
    let mut out = Vec::new();
    for statement in import_statements(text) {
        read_statement(&statement, folder, &mut out);
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    Name(&'a str),
    Dot,
    Comma,
    Star,
    Open,
    Close,
    Other,
}

/// The tokens of each statement that begins with `import` or `from`. A statement ends at a
/// line's end outside brackets (a backslash continues it), at `;`, or at a `:` outside
/// brackets, which is where a compound statement's body may begin on the same line.
fn import_statements(text: &str) -> Vec<Vec<Token<'_>>> {
    let bytes = text.as_bytes();
    let mut statements = Vec::new();
    let mut current: Vec<Token> = Vec::new();
    // Whether the statement being read began with `import` or `from`; `None` before its
    // first token.
    let mut importing: Option<bool> = None;
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let token = match c {
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'\\' => {
                // A backslash before the line's end joins the next line to this one.
                i += 1;
                if bytes.get(i) == Some(&b'\r') {
                    i += 1;
                }
                if bytes.get(i) == Some(&b'\n') {
                    i += 1;
                }
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' => {
                i += 1;
                continue;
            }
            b'\n' | b';' | b':' if depth == 0 => {
                end(&mut statements, &mut current, &mut importing);
                i += 1;
                continue;
            }
            b'\'' | b'"' => {
                i = after_string(bytes, i);
                Token::Other
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
                Token::Open
            }
            b')' | b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
                Token::Close
            }
            b'.' => {
                i += 1;
                Token::Dot
            }
            b',' => {
                i += 1;
                Token::Comma
            }
            b'*' => {
                i += 1;
                Token::Star
            }
            c if c == b'_' || c.is_ascii_alphanumeric() || c >= 0x80 => {
                let start = i;
                while i < bytes.len()
                    && (bytes[i] == b'_' || bytes[i].is_ascii_alphanumeric() || bytes[i] >= 0x80)
                {
                    i += 1;
                }
                let word = &text[start..i];
                if matches!(bytes.get(i), Some(b'\'' | b'"')) && is_string_prefix(word) {
                    i = after_string(bytes, i);
                    Token::Other
                } else if c.is_ascii_digit() {
                    Token::Other
                } else {
                    Token::Name(word)
                }
            }
            b'\n' => {
                i += 1;
                continue;
            }
            _ => {
                i += 1;
                Token::Other
            }
        };
        match importing {
            None => {
                importing = Some(matches!(token, Token::Name("import" | "from")));
                current.push(token);
            }
            Some(true) => current.push(token),
            Some(false) => {}
        }
    }
    end(&mut statements, &mut current, &mut importing);
    statements
}

/// Ends the statement being read, keeping its tokens if it imports.
fn end<'a>(
    statements: &mut Vec<Vec<Token<'a>>>,
    current: &mut Vec<Token<'a>>,
    importing: &mut Option<bool>,
) {
    if *importing == Some(true) {
        statements.push(std::mem::take(current));
    }
    current.clear();
    *importing = None;
}

/// Whether `word` before a quote makes a string prefix (`r`, `b`, `f`, `rb`, …).
fn is_string_prefix(word: &str) -> bool {
    word.len() <= 2
        && word
            .bytes()
            .all(|b| matches!(b.to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f' | b't'))
}

/// The index just past the string literal whose opening quote is at `start`. A single-quoted
/// string ends at its line's end even unclosed, so a stray quote costs one line at most.
fn after_string(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let triple = bytes.get(start + 1) == Some(&quote) && bytes.get(start + 2) == Some(&quote);
    let mut i = start + if triple { 3 } else { 1 };
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\n' if !triple => return i,
            q if q == quote => {
                if !triple {
                    return i + 1;
                }
                if bytes.get(i + 1) == Some(&quote) && bytes.get(i + 2) == Some(&quote) {
                    return i + 3;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    bytes.len()
}

/// Reads one `import a.b as c, d` or `from ..a import (b as c, d)` statement into `out`.
fn read_statement(tokens: &[Token<'_>], folder: &Path, out: &mut Vec<Load>) {
    let mut at = 1;
    match tokens.first() {
        Some(Token::Name("import")) => {
            while at < tokens.len() {
                let parts = dotted(tokens, &mut at);
                if !parts.is_empty() {
                    out.push(Load::Dotted(parts));
                }
                skip_alias_and_comma(tokens, &mut at);
            }
        }
        Some(Token::Name("from")) => {
            let mut level = 0;
            while tokens.get(at) == Some(&Token::Dot) {
                level += 1;
                at += 1;
            }
            let module = dotted(tokens, &mut at);
            if tokens.get(at) != Some(&Token::Name("import")) {
                return;
            }
            at += 1;
            let mut names = Vec::new();
            while at < tokens.len() {
                match tokens[at] {
                    Token::Name(name) => {
                        names.push(name.to_string());
                        at += 1;
                        skip_alias_and_comma(tokens, &mut at);
                    }
                    _ => at += 1,
                }
            }
            let each = |name: Option<&String>| -> Load {
                let mut parts = module.clone();
                parts.extend(name.cloned());
                match level {
                    0 => Load::Dotted(parts),
                    _ => {
                        let mut base = folder.to_path_buf();
                        for _ in 1..level {
                            base.pop();
                        }
                        Load::Under(parts.iter().fold(base, |p, part| p.join(part)))
                    }
                }
            };
            // `from m import *` loads m; each named import may be a submodule of m.
            match names.is_empty() {
                true => out.push(each(None)),
                false => out.extend(names.iter().map(|n| each(Some(n)))),
            }
        }
        _ => {}
    }
}

/// The dotted name starting at `at` (`a.b.c`), moving `at` past it.
fn dotted(tokens: &[Token<'_>], at: &mut usize) -> Vec<String> {
    let mut parts = Vec::new();
    while let Some(Token::Name(name)) = tokens.get(*at) {
        if *name == "import" {
            break;
        }
        parts.push(name.to_string());
        *at += 1;
        if tokens.get(*at) != Some(&Token::Dot) {
            break;
        }
        *at += 1;
    }
    parts
}

/// Moves `at` past an `as alias` and the comma after it, or past one token that is neither.
fn skip_alias_and_comma(tokens: &[Token<'_>], at: &mut usize) {
    if tokens.get(*at) == Some(&Token::Name("as")) {
        *at += 2;
    }
    match tokens.get(*at) {
        Some(Token::Comma) | Some(Token::Close) | Some(Token::Open) => *at += 1,
        Some(Token::Name(_)) | None => {}
        Some(_) => *at += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dotted(s: &str) -> Load {
        Load::Dotted(s.split('.').map(str::to_string).collect())
    }

    #[test]
    fn imports_are_read_from_statements_only() {
        let text = r#"
"""Docs: from django.shortcuts import render
import nothing_here
"""
import os.path as p, sys  # import commented
from django.contrib.sites.shortcuts import get_current_site
from django.shortcuts import (
    render,  # a ) in a comment
    redirect as r,
)
x = "import fake"; from . import sibling
try: import optional
except ImportError: pass
from .. import *
from ..pkg.mod import thing
if True:
    from \
        deep import name
shortcuts = 1
"#;
        let got = loads(Path::new("/r/a/b/file.py"), text);
        let want = vec![
            dotted("os.path"),
            dotted("sys"),
            dotted("django.contrib.sites.shortcuts.get_current_site"),
            dotted("django.shortcuts.render"),
            dotted("django.shortcuts.redirect"),
            Load::Under(PathBuf::from("/r/a/b/sibling")),
            dotted("optional"),
            Load::Under(PathBuf::from("/r/a")),
            Load::Under(PathBuf::from("/r/a/pkg/mod/thing")),
            dotted("deep.name"),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn an_import_may_load_any_module_its_dotted_name_begins_with() {
        let module = |path: &str| Module::of(Path::new(path)).unwrap();
        let shortcuts = module("/w/Django-5/django/shortcuts.py");
        assert!(dotted("django.shortcuts.render").may_load(&shortcuts));
        assert!(dotted("shortcuts").may_load(&shortcuts));
        assert!(!dotted("django.contrib.sites.shortcuts.x").may_load(&shortcuts));
        assert!(!dotted("shortcuts2").may_load(&shortcuts));
        // A package's __init__ is loaded by every import below it.
        let package = module("/w/Django-5/django/__init__.py");
        assert!(dotted("django.contrib.sites.shortcuts.x").may_load(&package));
        // A stub package stands for its package.
        assert!(dotted("yaml.loader").may_load(&module("/w/types-stubs/yaml-stubs/loader.pyi")));
        let relative = Load::Under(PathBuf::from("/w/django/contrib/sites/shortcuts/x"));
        assert!(relative.may_load(&module("/w/django/contrib/sites/shortcuts.py")));
        assert!(relative.may_load(&module("/w/django/contrib/__init__.py")));
        assert!(!relative.may_load(&shortcuts));
    }

    #[test]
    fn a_module_is_its_path_or_its_package_folder() {
        let path = |p: &str| Module::of(Path::new(p)).map(|m| m.path);
        assert_eq!(path("/w/a/b.py"), Some(PathBuf::from("/w/a/b")));
        assert_eq!(path("/w/a/__init__.pyi"), Some(PathBuf::from("/w/a")));
        assert_eq!(path("/w/a/b.ts"), None);
    }
}
