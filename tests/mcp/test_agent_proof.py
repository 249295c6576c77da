"""Agent-proof editing through a real MCP client: a failed syntax fix is reported as an error
that changed shape (not silently clean), a real fix says so, and a mid-line multi-line capture keeps the
body's shape."""


from conftest import calls



def test_a_failed_syntax_fix_is_still_broken_and_a_real_fix_says_fixed(workspace):
    (workspace / "m.py").write_text("def f(:\n    return 1\n")
    out = calls(workspace, [
        # The model "fixes" the error but leaves it broken in another shape.
        ("edit", {"path": "m.py", "old_string": "def f(:", "new_string": "def f(x:"}),
        ("edit", {"path": "m.py", "old_string": "def f(x:", "new_string": "def f(x):"}),
    ])
    (err1, failed), (err2, fixed) = out
    assert not err1 and not err2, out
    assert "m.py: 1 syntax error changed (one of its kind was at this place" in failed, failed
    assert "(new)" not in failed, failed
    assert "m.py: fixed 1 syntax error; none left" in fixed, fixed


def test_a_mid_line_multi_line_capture_keeps_its_shape(workspace):
    source = "class C:\n    def f(self, a):\n        if a:\n            return 1\n        return 2\n"
    (workspace / "c.py").write_text(source)
    out = calls(workspace, [
        ("ast_edit", {"pattern": "def f($$$P): $$$B", "rewrite": "def g($$$P): $$$B", "path": "c.py"}),
        ("resolve", {"edit_id": "edit_1", "action": "accept"}),
    ])
    assert [e for e, _ in out] == [False, False], out
    assert (workspace / "c.py").read_text() == source.replace("def f(", "def g("), (workspace / "c.py").read_text()
