//! `lsp` against the real clangd, pyright, typescript-language-server and gopls, each on a
//! small two-file project: definition, references, hover, symbols and diagnostics, and the
//! answers a model can paste into its next call. The languages run one at a time (a serial
//! group), each with one server for all its cases.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Value, json};
use tether::{Run, Surface};
use tokio_util::sync::CancellationToken;

/// Only one language server test runs at a time on 2 cores.
static SERIAL: Mutex<()> = Mutex::new(());

struct Case {
    args: Value,
    expect: &'static [&'static str],
}

fn case(args: Value, expect: &'static [&'static str]) -> Case {
    Case { args, expect }
}

/// Writes `files` into a fresh workspace, runs every case through one run, and checks that
/// the run ends its server.
fn check(files: &[(&str, &str)], cases: Vec<Case>) {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        for (name, text) in files {
            let p = ws.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            // `{ws}` stands for the workspace's absolute path (compile_commands.json wants it).
            std::fs::write(p, text.replace("{ws}", &ws.display().to_string())).unwrap();
        }
        let run = common::run_with_config(dir.path(), common::LSP_BUDGETS);
        for c in cases {
            let out = call(&run, c.args.clone()).await;
            for want in c.expect {
                assert!(
                    out.contains(want),
                    "{}: `{want}` missing in:\n{out}",
                    c.args
                );
            }
        }
        run.shutdown(Duration::from_secs(5)).await;
    });
}

async fn call(run: &Run, args: Value) -> String {
    run.runtime()
        .call(Surface::Agent, "lsp", args, CancellationToken::new())
        .await
        .map(|o| o.to_text())
        .unwrap_or_else(|e| format!("ERROR {e}"))
}

fn at(action: &str, file: &str, line: usize, symbol: &str) -> Value {
    json!({"action": action, "file": file, "line": line, "symbol": symbol})
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| Path::new(&d).join(program).is_file())
    })
}

/// Every file in the compilation database, so clangd indexes the project, not only open files.
const COMPILE_COMMANDS: &str = r#"[
  {"directory": "{ws}", "file": "{ws}/shapes.c", "arguments": ["cc", "-std=c11", "-c", "shapes.c"]},
  {"directory": "{ws}", "file": "{ws}/main.c", "arguments": ["cc", "-std=c11", "-c", "main.c"]},
  {"directory": "{ws}", "file": "{ws}/broken.c", "arguments": ["cc", "-std=c11", "-c", "broken.c"]}
]"#;

#[test]
fn clangd() {
    let header = "struct square {\n    int side;\n};\n\n/* The area of a square. */\nint area(struct square s);\n";
    let source =
        "#include \"shapes.h\"\n\nint area(struct square s) {\n    return s.side * s.side;\n}\n";
    let main = "#include \"shapes.h\"\n\nint main(void) {\n    const char *s = \"😀 漢字\"; struct square q = {2};\n    return area(q);\n}\n";
    let broken = "int broken(void) {\n    return undeclared_name;\n}\n";
    check(
        &[
            ("compile_commands.json", COMPILE_COMMANDS),
            ("shapes.h", header),
            ("shapes.c", source),
            ("main.c", main),
            ("broken.c", broken),
        ],
        vec![
            case(
                at("definition", "main.c", 5, "area"),
                &["  area  | int area(struct square s)"],
            ),
            case(
                at("references", "shapes.h", 6, "area"),
                // clangd's background index may not have reached shapes.c yet, and it does not say
                // when it is still indexing; the open files are always there.
                &["main.c:5  area", "shapes.h:6  area"],
            ),
            case(
                at("hover", "main.c", 5, "area"),
                &["int area(struct square s)"],
            ),
            case(
                at("type_definition", "main.c", 4, "q ="),
                &["shapes.h:1  square"],
            ),
            case(
                json!({"action": "symbols", "file": "main.c"}),
                &["3  function main"],
            ),
            case(
                json!({"action": "diagnostics", "file": "broken.c"}),
                &["broken.c:2  error", "undeclared"],
            ),
            case(
                json!({"action": "status"}),
                &["clangd for . ", "positions in utf-8"],
            ),
        ],
    );
}

#[test]
fn pyright() {
    if !on_path("pyright-langserver") {
        panic!("pyright-langserver is not on PATH: run scripts/test, which installs it");
    }
    let shapes = "class Square:\n    \"\"\"A square.\"\"\"\n\n    def __init__(self, side: int) -> None:\n        self.side = side\n\n    def area(self) -> int:\n        \"\"\"The area in square units.\"\"\"\n        return self.side * self.side\n";
    let main = "from shapes import Square\n\nlabel = \"😀 漢字\"; square = Square(2)\nprint(square.area())\n";
    let broken = "def f() -> int:\n    return undefined_name\n";
    check(
        &[
            (
                "pyproject.toml",
                "[project]\nname = \"shapes\"\nversion = \"0.1\"\n",
            ),
            ("shapes.py", shapes),
            ("main.py", main),
            ("broken.py", broken),
        ],
        vec![
            case(
                at("definition", "main.py", 4, "area"),
                &["shapes.py:7  area  | def area(self) -> int:"],
            ),
            case(
                at("definition", "main.py", 3, "Square("),
                &["shapes.py:1  Square"],
            ),
            case(
                at("references", "shapes.py", 1, "Square"),
                &[
                    "main.py:1  Square",
                    "main.py:3  Square",
                    "shapes.py:1  Square",
                ],
            ),
            case(
                at("hover", "main.py", 4, "area"),
                &["def area() -> int", "The area in square units."],
            ),
            case(
                json!({"action": "symbols", "file": "shapes.py"}),
                &["1  class Square", "  7  method area"],
            ),
            case(
                json!({"action": "diagnostics", "file": "broken.py"}),
                &["broken.py:2  error", "undefined_name"],
            ),
            case(
                json!({"action": "status"}),
                &[
                    "positions in utf-16",
                    "restricted: the system python3 is asked for search paths",
                ],
            ),
        ],
    );
}

#[test]
fn typescript_language_server() {
    let shapes = "export interface Shape {\n  area(): number;\n}\n\n/** A square. */\nexport class Square implements Shape {\n  constructor(public side: number) {}\n  area(): number {\n    return this.side * this.side;\n  }\n}\n";
    let main = "import { Square } from \"./shapes\";\n\nconst label = \"😀 漢字\"; const square = new Square(2);\nconsole.log(label, square.area());\n";
    let broken = "export const n: number = \"not a number\";\n";
    let tsconfig = "{\"compilerOptions\": {\"strict\": true, \"target\": \"es2020\", \"module\": \"commonjs\"}}\n";
    check(
        &[
            (
                "package.json",
                "{\"name\": \"shapes\", \"version\": \"0.1.0\"}\n",
            ),
            ("tsconfig.json", tsconfig),
            ("shapes.ts", shapes),
            ("main.ts", main),
            ("broken.ts", broken),
        ],
        vec![
            case(
                at("definition", "main.ts", 4, "area"),
                &["shapes.ts:8  area"],
            ),
            case(
                at("references", "shapes.ts", 6, "Square"),
                &["main.ts:1  Square", "main.ts:3  Square"],
            ),
            case(
                at("hover", "main.ts", 3, "Square("),
                &["new Square(side: number): Square", "A square."],
            ),
            case(
                at("implementation", "shapes.ts", 1, "Shape"),
                &["shapes.ts:6  Square"],
            ),
            case(
                json!({"action": "symbols", "file": "shapes.ts"}),
                &["6  class Square"],
            ),
            case(
                json!({"action": "diagnostics", "file": "broken.ts"}),
                &["broken.ts:1  error", "not assignable"],
            ),
            // Untrusted: a global TypeScript, never the project's node_modules.
            case(
                json!({"action": "status"}),
                &["restricted: TypeScript from /", "(a global install)"],
            ),
        ],
    );
}

#[test]
fn gopls() {
    let shapes = "package main\n\n// Square is a square.\ntype Square struct {\n\tSide int\n}\n\n// Area is the area in square units.\nfunc (s Square) Area() int {\n\treturn s.Side * s.Side\n}\n";
    let main = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tlabel := \"😀 漢字\"; square := Square{Side: 2}\n\tfmt.Println(label, square.Area())\n}\n";
    check(
        &[
            ("go.mod", "module example.com/shapes\n\ngo 1.19\n"),
            ("shapes.go", shapes),
            ("main.go", main),
            (
                "broken.go",
                "package main\n\nfunc broken() int {\n\treturn undefinedName\n}\n",
            ),
        ],
        vec![
            case(
                at("definition", "main.go", 7, "Area"),
                &["shapes.go:9  Area"],
            ),
            case(
                at("references", "shapes.go", 4, "Square"),
                &["main.go:6  Square", "shapes.go:4  Square"],
            ),
            case(
                at("hover", "main.go", 7, "Area"),
                &["func (Square).Area() int"],
            ),
            case(
                json!({"action": "symbols", "file": "shapes.go"}),
                &["Square"],
            ),
            case(
                json!({"action": "diagnostics", "file": "broken.go"}),
                &["broken.go:4  error", "undefinedName"],
            ),
            case(json!({"action": "status"}), &["gopls for . "]),
        ],
    );
}

#[test]
fn dart_is_not_installed_here_and_the_answer_says_why() {
    assert!(!on_path("dart"), "dart is on PATH: test it like the others");
    check(
        &[
            ("pubspec.yaml", "name: shapes\n"),
            ("lib/main.dart", "int twice(int x) => 2 * x;\n"),
        ],
        vec![
            case(
                at("hover", "lib/main.dart", 1, "twice"),
                &[
                    "ERROR",
                    "no language server can serve dart here",
                    "dart: pubspec.yaml found at ., but dart is not on PATH",
                ],
            ),
            case(
                json!({"action": "status"}),
                &["dart: unavailable:", "dart is not on PATH"],
            ),
        ],
    );
}

#[test]
fn a_write_says_once_why_no_server_gives_diagnostics() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("lib")).unwrap();
        std::fs::write(ws.join("pubspec.yaml"), "name: shapes\n").unwrap();
        let run = common::run_with_config(dir.path(), "");
        let write = |text: &str| {
            let args = json!({"path": "lib/main.dart", "content": text});
            let runtime = run.runtime().clone();
            async move {
                runtime
                    .call(Surface::Agent, "write", args, CancellationToken::new())
                    .await
                    .unwrap()
                    .to_text()
            }
        };
        let first = write("int one() => 1;\n").await;
        assert!(
            first.contains("diagnostics after this write:\n  lib/main.dart: unavailable (no language server checked it: dart: pubspec.yaml found at ., but dart is not on PATH)"),
            "{first}"
        );
        let second = write("int two() => 2;\n").await;
        assert!(second.contains("lib/main.dart: unavailable (not checked by a language server, as said above)"), "{second}");
        // Without a project marker, the write says no server checked it, and why.
        let plain = run
            .runtime()
            .call(Surface::Agent, "write", json!({"path": "notes.py", "content": "x = 1\n"}), CancellationToken::new())
            .await
            .unwrap()
            .to_text();
        assert!(plain.contains("notes.py: unavailable (no language server checked it:"), "{plain}");
        assert!(plain.contains("no root marker (pyproject.toml"), "{plain}");
    });
}
