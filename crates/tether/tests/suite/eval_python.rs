//! The `eval` tool with the real python3 from the project's `.venv`: state kept between cells,
//! the echo, output from Python and from a shell command in order with `display`, errors, a
//! reset, a kernel that exits and the fresh one after it, the idle budget (a silent loop is
//! interrupted with its state kept, a chatty cell is not), the `tool()` bridge, `%pip` (by name,
//! wheel path, requirement and `-e` folder, and its failure), and no kernel left after the run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use tether::{Run, Surface};
use tokio_util::sync::CancellationToken;

async fn eval(run: &Run, code: &str) -> String {
    run.runtime()
        .call(
            Surface::Agent,
            "eval",
            json!({"code": code, "description": "a cell of the Python kernel tests"}),
            CancellationToken::new(),
        )
        .await
        .map(|o| o.to_text())
        .unwrap_or_else(|e| format!("ERROR {e}"))
}

/// A run over a project whose `.venv` is the test environment, with a 2 s idle budget.
fn project(dir: &Path) -> Run {
    project_idle(dir, 2)
}

/// The same, with an idle budget of `idle` seconds.
fn project_idle(dir: &Path, idle: u64) -> Run {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-venv");
    assert!(
        venv.join("bin/python").exists(),
        "target/test-venv is missing: run scripts/test, which makes it"
    );
    let ws = dir.join("ws");
    common::write(&ws, "notes.txt", "first line\nsecond line\n");
    std::os::unix::fs::symlink(venv.canonicalize().unwrap(), ws.join(".venv")).unwrap();
    common::run_with_config(dir, &format!("[eval]\nidle_timeout_s = {idle}\n"))
}

#[test]
fn python_cells_keep_their_state_and_show_output_in_order() {
    // Each checks the process table for kernels of this process.
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());

        let first = eval(&run, "x = 41\nx + 1").await;
        assert!(
            first.contains("started Python 3.")
                && first.contains("ws/.venv/bin/python) (the project's .venv)"),
            "{first}"
        );
        assert!(first.ends_with("Out: 42"), "{first}");
        let again = eval(&run, "x * 2").await;
        assert_eq!(again, "Out: 82", "the state or the echo was lost");

        // Python's prints, a shell command's output and displays, in the order they happened.
        let mixed = eval(
            &run,
            "import os, sys\nprint('one')\ndisplay({'two': 2})\nos.system('echo three')\n\
             print('four', file=sys.stderr)\ndisplay('five')\nNone",
        )
        .await;
        assert_eq!(mixed, "one\n{'two': 2}\nthree\nfour\n'five'", "{mixed}");

        // Rich forms: markdown before repr, HTML as text.
        let rich = eval(
            &run,
            "class Md:\n    def _repr_markdown_(self): return '**bold**'\n\
             class Html:\n    def _repr_html_(self): return '<p>a &amp; b</p>'\n\
             display(Md())\nHtml()",
        )
        .await;
        assert_eq!(rich, "**bold**\nOut: a & b", "{rich}");

        // An error is an error: what raised first, then the printed output and the traceback
        // of the cell, each on lines of its own under its label.
        let failed = eval(&run, "print('before')\n{}['missing']").await;
        assert!(
            failed.starts_with(
                "ERROR the cell raised KeyError: 'missing'\noutput before the error:\nbefore\n\
                 the error:\nTraceback"
            ) && failed.contains("File \"<cell 5>\", line 2, in <module>")
                && failed.ends_with("KeyError: 'missing'")
                && !failed.contains("<string>"),
            "{failed}"
        );
        let silent = eval(&run, "raise ValueError('no output')").await;
        assert!(
            silent.starts_with("ERROR the cell raised ValueError: no output\nthe error:\nTraceback"),
            "{silent}"
        );

        // Reset: the old variables are gone.
        let reset = run
            .runtime()
            .call(
                Surface::Agent,
                "eval",
                json!({"code": "'x' in globals()", "description": "check that a reset clears the variables", "reset": true}),
                CancellationToken::new(),
            )
            .await
            .unwrap()
            .to_text();
        assert!(
            reset.contains("reset: the old kernel and its variables are gone")
                && reset.ends_with("Out: False"),
            "{reset}"
        );

        // A kernel that exits is reported once; the next cell runs in a fresh one.
        eval(&run, "y = 1").await;
        let died = eval(&run, "import os\nprint('bye', flush=True)\nos._exit(1)").await;
        assert!(
            died.starts_with("ERROR the kernel died during the cell (exit code 1)")
                && died.contains("its state is gone")
                && died.ends_with("output before the error:\nbye"),
            "{died}"
        );
        let fresh = eval(&run, "'y' in globals()").await;
        assert!(
            fresh.contains("started Python") && fresh.ends_with("Out: False"),
            "{fresh}"
        );

        let bad = run
            .runtime()
            .call(
                Surface::Agent,
                "eval",
                json!({"code": "1", "description": " "}),
                CancellationToken::new(),
            )
            .await
            .unwrap_err()
            .to_string();
        assert!(
            bad.contains("`description` is missing or empty") && bad.contains("labels the cell"),
            "{bad}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
    let left = tether_proc::children_named(std::process::id(), "python");
    assert!(left.is_empty(), "a kernel was left running: {left:?}");
}

#[test]
fn a_description_outside_five_to_ten_words_is_taken_with_a_word_on_what_is_expected() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        // Started first, so the results below carry no start line.
        eval(&run, "1").await;
        // A description outside 5 to 10 words is taken, with a word on what is expected.
        for (description, words) in [
            ("check", "1 word"),
            (
                "one two three four five six seven eight nine ten eleven",
                "11 words",
            ),
        ] {
            let said = run
                .runtime()
                .call(
                    Surface::Agent,
                    "eval",
                    json!({"code": "6 * 7", "description": description}),
                    CancellationToken::new(),
                )
                .await
                .unwrap()
                .to_text();
            assert_eq!(
                said,
                format!(
                    "the description has {words}: give 5 to 10 words on what the cell does, as \
                     it labels the cell in the transcript\nOut: 42"
                ),
            );
        }
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn a_process_a_cell_started_in_a_session_of_its_own_ends_with_the_run() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pid: u32 = rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        // A new session: the kernel's group kill never reaches it.
        let out = eval(
            &run,
            "import subprocess\np = subprocess.Popen(['sleep', '300'], start_new_session=True)\np.pid",
        )
        .await;
        let last = out.lines().last().unwrap_or_default();
        let pid = last.trim_start_matches("Out: ").trim().parse().unwrap();
        assert!(tether_proc::is_running(pid), "{out}");
        run.shutdown(Duration::from_secs(5)).await;
        drop(run);
        pid
    });
    assert!(
        tether_proc::gone_within(pid, Duration::from_secs(5)),
        "the cell's process outlived the run"
    );
}

#[test]
fn the_idle_budget_interrupts_a_silent_cell_and_spares_a_chatty_one() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        eval(&run, "kept = 'still here'").await;
        let stuck = eval(&run, "print('looping')\nwhile True:\n    pass").await;
        assert!(
            stuck.contains("looping")
                && stuck.contains("KeyboardInterrupt")
                && stuck.contains("interrupted after 2 s without output")
                && stuck.contains("the kernel and its variables are kept"),
            "{stuck}"
        );
        assert_eq!(eval(&run, "kept").await, "Out: 'still here'");

        // Output every half second for 4 s: never silent for the 2 s budget.
        let chatty = eval(
            &run,
            "import time\nfor i in range(8):\n    print(i, flush=True)\n    time.sleep(0.5)\n'done'",
        )
        .await;
        assert!(chatty.ends_with("7\nOut: 'done'"), "{chatty}");
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn a_cell_calls_the_runs_own_tools() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = project(dir.path());
        let read = eval(
            &run,
            "text = tool('read', {'path': 'notes.txt'})\nprint(text)\n'second line' in text",
        )
        .await;
        assert!(
            read.contains("first line") && read.ends_with("Out: True"),
            "{read}"
        );
        // A write through the bridge goes through the same door.
        let wrote = eval(
            &run,
            "tool('write', {'path': 'made.txt', 'content': 'made in a cell\\n'})",
        )
        .await;
        assert!(wrote.contains("made.txt"), "{wrote}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("ws/made.txt")).unwrap(),
            "made in a cell\n"
        );
        // A write through the bridge gets its report like any other write.
        let broken = eval(
            &run,
            "print(tool('write', {'path': 'bad.py', 'content': 'def f(:\\n    pass\\n'}))",
        )
        .await;
        assert!(
            broken.contains("syntax check (tree-sitter) after this write")
                && broken.contains("bad.py: 1 new syntax error"),
            "{broken}"
        );
        // A tool's failure raises in the cell with its message; eval cannot call eval.
        let missing = eval(
            &run,
            "try:\n    tool('read', {'path': 'nope.txt'})\nexcept ToolError as e:\n    print('raised:', e)",
        )
        .await;
        assert!(missing.contains("raised: nope.txt"), "{missing}");
        let nested = eval(&run, "tool('eval', {'code': '1', 'description': 'again'})").await;
        assert!(
            nested.contains("ToolError") && nested.contains("a tool cannot call itself"),
            "{nested}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn ipython_idioms_are_rewritten_and_strings_are_left_alone() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        // %%timeit is silent for a second or more.
        let run = project_idle(dir.path(), 60);
        std::fs::create_dir(dir.path().join("ws/sub")).unwrap();

        let shell = eval(&run, "!echo from-a-shell\nlines = !printf 'a\\nb\\n'\nlines").await;
        assert!(
            shell.contains("from-a-shell") && shell.ends_with("Out: ['a', 'b']"),
            "{shell}"
        );
        // `%` and `!` inside strings and expressions are Python's, not magics.
        let strings = eval(
            &run,
            "text = '''\n%pip install nothing\n!rm -rf nothing\n'''\nrate = '100%'\n(7\n% 4, text.count('!'), rate)",
        )
        .await;
        assert_eq!(strings, "Out: (3, 1, '100%')", "{strings}");
        let cd = eval(&run, "%cd sub\nimport os\nos.getcwd()").await;
        assert!(cd.ends_with("/ws/sub'"), "{cd}");
        let pwd = eval(&run, "%pwd").await;
        assert!(pwd.ends_with("/ws/sub"), "{pwd}");
        let bash = eval(&run, "%%bash\necho $((20 + 22))").await;
        assert_eq!(bash, "42", "{bash}");
        let timed = eval(&run, "%%timeit\nsum(range(100))").await;
        assert!(timed.contains("per loop (best of 3"), "{timed}");
        let unknown = eval(&run, "%matplotlib inline").await;
        assert!(
            unknown.contains("MagicError: unknown magic %matplotlib: tether knows %pip, %cd"),
            "{unknown}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn dataframes_are_tables_and_figures_are_pngs() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        // Importing pandas on a loaded machine can stay silent past a short idle budget.
        let run = project_idle(dir.path(), 120);
        let table = eval(
            &run,
            "import pandas as pd\npd.DataFrame({'n': range(30), 'sq': [i * i for i in range(30)]})",
        )
        .await;
        assert!(
            table.contains("| n | sq |")
                && table.contains("| 0 | 0 | 0 |")
                && table.contains("| … |")
                && table.contains("| 29 | 29 | 841 |")
                && table.contains("[30 rows × 2 columns]")
                && !table.contains("| 15 | 15 |"),
            "{table}"
        );
        let out = run
            .runtime()
            .call(
                Surface::Agent,
                "eval",
                json!({
                    "code": "import matplotlib.pyplot as plt\nprint('plotting')\nplt.plot([1, 3, 2])\nplt.title('a line')\nNone",
                    "description": "draw a line with matplotlib"
                }),
                CancellationToken::new(),
            )
            .await
            .unwrap();
        let pngs: Vec<&Vec<u8>> = out
            .blocks()
            .iter()
            .filter_map(|b| match b {
                tether::Block::Png(png) => Some(png),
                _ => None,
            })
            .collect();
        assert_eq!(pngs.len(), 1, "{}", out.to_text());
        assert!(pngs[0].starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
        // The figure was closed: the next cell shows none.
        assert_eq!(eval(&run, "1").await, "Out: 1");
        let doctor = tether::doctor_report(&run, &dir.path().join("ws")).await;
        assert!(
            doctor.contains("ws/.venv/bin/python (the project's .venv); inside the workspace, \
                             which is not trusted, so doctor does not run it"),
            "{doctor}"
        );
        let cfg = dir.path().join("cfg");
        tether::TrustStore::new(&cfg)
            .trust(&dir.path().join("ws").canonicalize().unwrap())
            .unwrap();
        let trusted = common::run_with_config(dir.path(), "");
        let doctor = tether::doctor_report(&trusted, &dir.path().join("ws")).await;
        assert!(
            doctor.contains("ws/.venv/bin/python (the project's .venv), Python 3.")
                && doctor.contains("; pandas and matplotlib import"),
            "{doctor}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn pip_installs_into_the_kernels_own_environment_and_the_next_import_sees_it() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = pip_project(dir.path());
        let wheel = "import zipfile, os\nos.makedirs('wheels', exist_ok=True)\n\
            with zipfile.ZipFile('wheels/tinypkg-1.0-py3-none-any.whl', 'w') as z:\n\
            \x20   z.writestr('tinypkg/__init__.py', 'VALUE = 42\\n')\n\
            \x20   z.writestr('tinypkg-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: tinypkg\\nVersion: 1.0\\n')\n\
            \x20   z.writestr('tinypkg-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n\
            \x20   z.writestr('tinypkg-1.0.dist-info/top_level.txt', 'tinypkg\\n')\n\
            \x20   z.writestr('tinypkg-1.0.dist-info/RECORD', '')\n";
        let first = eval(&run, wheel).await;
        assert!(first.contains("(the project's .venv)"), "{first}");
        let before = eval(&run, "import tinypkg").await;
        assert!(before.contains("ModuleNotFoundError"), "{before}");
        let installed = eval(
            &run,
            "%pip install --no-index --find-links wheels tinypkg\nimport tinypkg\ntinypkg.VALUE",
        )
        .await;
        assert!(
            installed.contains("Successfully installed tinypkg-1.0")
                && installed.ends_with("Out: 42"),
            "{installed}"
        );
        let again = eval(
            &run,
            "%pip install --no-index --find-links wheels --force-reinstall tinypkg",
        )
        .await;
        assert!(
            again.contains("already imported before this install: tinypkg"),
            "{again}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// A project with a `.venv` of its own (pip from Python's bundled wheel, no registry), so the
/// shared test environment is not changed by what a test installs.
fn pip_project(dir: &Path) -> Run {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", ".venv"])
        .current_dir(&ws)
        .status()
        .unwrap();
    assert!(made.success());
    common::run_with_config(dir, "[eval]\nidle_timeout_s = 120\n")
}

/// A cell that writes `wheels/tinypkg-<v>-py3-none-any.whl` for 1.0 and 2.0, whose VALUE is
/// the major version.
const TWO_WHEELS: &str = "import zipfile, os\nos.makedirs('wheels', exist_ok=True)\n\
    for v in ('1.0', '2.0'):\n\
    \x20   info = f'tinypkg-{v}.dist-info'\n\
    \x20   with zipfile.ZipFile(f'wheels/tinypkg-{v}-py3-none-any.whl', 'w') as z:\n\
    \x20       z.writestr('tinypkg/__init__.py', f'VALUE = {v[0]}\\n')\n\
    \x20       z.writestr(f'{info}/METADATA', f'Metadata-Version: 2.1\\nName: tinypkg\\nVersion: {v}\\n')\n\
    \x20       z.writestr(f'{info}/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n\
    \x20       z.writestr(f'{info}/RECORD', '')\n";

#[test]
fn pip_install_by_wheel_path_replaces_the_imported_module_and_a_failed_pip_is_an_error() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = pip_project(dir.path());
        let made = eval(&run, TWO_WHEELS).await;
        assert!(made.contains("(the project's .venv)"), "{made}");
        let wheels = dir.path().join("ws/wheels").canonicalize().unwrap();
        let wheel = |v: &str| wheels.join(format!("tinypkg-{v}-py3-none-any.whl"));
        let wheel = |v: &str| wheel(v).display().to_string();

        let one = eval(
            &run,
            &format!(
                "%pip install --no-index {}\nimport tinypkg\ntinypkg.VALUE",
                wheel("1.0")
            ),
        )
        .await;
        assert!(
            one.contains("Successfully installed tinypkg-1.0") && one.ends_with("Out: 1"),
            "{one}"
        );
        // The same cell imports the new version; the old module was named.
        let two = eval(
            &run,
            &format!(
                "%pip install --no-index {}\nimport tinypkg\ntinypkg.VALUE",
                wheel("2.0")
            ),
        )
        .await;
        assert!(
            two.contains("Successfully installed tinypkg-2.0")
                && two.contains("already imported before this install: tinypkg")
                && two.ends_with("Out: 2"),
            "{two}"
        );
        // Back to 1.0 with a requirement naming the wheel; the next cell sees it.
        let back = eval(
            &run,
            &format!(
                "%pip install --no-index 'tinypkg @ file://{}'",
                wheel("1.0")
            ),
        )
        .await;
        assert!(
            back.contains("Successfully installed tinypkg-1.0"),
            "{back}"
        );
        assert_eq!(eval(&run, "import tinypkg\ntinypkg.VALUE").await, "Out: 1");

        let failed = eval(
            &run,
            "%pip install --no-index /nonexistent/tinypkg-9.0-py3-none-any.whl",
        )
        .await;
        assert!(
            failed.starts_with("ERROR the cell raised PipError: pip ended with exit code 1")
                && failed.contains("output before the error:"),
            "{failed}"
        );
        // The failure ended the cell: nothing after the `%pip` line ran.
        let stopped = eval(
            &run,
            "%pip install --no-index /nonexistent/x-1.0-py3-none-any.whl\nprint('ran on')",
        )
        .await;
        assert!(
            stopped.starts_with("ERROR") && !stopped.contains("ran on"),
            "{stopped}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}

/// A build backend of a few lines (no setuptools, no registry) whose editable wheel is a `.pth`
/// naming the project, as hatchling's are: neither RECORD nor top_level.txt names its module.
const EDITABLE_BACKEND: &str = r#"
import os, zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def _wheel(directory, files):
    version = open(os.path.join(HERE, "VERSION")).read().strip()
    info = f"edpkg-{version}.dist-info"
    name = f"edpkg-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, name), "w") as z:
        for path, text in files.items():
            z.writestr(path, text)
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: edpkg\nVersion: {version}\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return name


def build_wheel(directory, config_settings=None, metadata_directory=None):
    return _wheel(directory, {"edpkg/__init__.py": open(os.path.join(HERE, "edpkg/__init__.py")).read()})


def build_editable(directory, config_settings=None, metadata_directory=None):
    return _wheel(directory, {"_edpkg.pth": HERE + "\n"})
"#;

#[test]
fn pip_install_of_an_editable_project_is_imported_at_once_and_afresh_after_a_reinstall() {
    let _serial = common::one_at_a_time();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let run = pip_project(dir.path());
        let proj = dir.path().join("ws/proj");
        common::write(&proj, "backend.py", EDITABLE_BACKEND);
        common::write(
            &proj,
            "pyproject.toml",
            "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\".\"]\n",
        );
        common::write(&proj, "VERSION", "1.0\n");
        common::write(&proj, "edpkg/__init__.py", "VALUE = 1\n");
        // The project is not in the kernel's folder: only the new `.pth` makes it importable.
        let one = eval(
            &run,
            "%pip install --no-index -e ./proj\nimport edpkg\nedpkg.VALUE",
        )
        .await;
        assert!(
            one.contains("Successfully installed edpkg-1.0") && one.ends_with("Out: 1"),
            "{one}"
        );
        common::write(&proj, "VERSION", "2.0\n");
        common::write(&proj, "edpkg/__init__.py", "VALUE = 2\n");
        let two = eval(
            &run,
            "%pip install --no-index -e ./proj\nimport edpkg\nedpkg.VALUE",
        )
        .await;
        assert!(
            two.contains("Successfully installed edpkg-2.0")
                && two.contains("already imported before this install: edpkg")
                && two.ends_with("Out: 2"),
            "{two}"
        );
        run.shutdown(Duration::from_secs(5)).await;
    });
}
