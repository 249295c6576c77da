"""Staged edits compose through a real MCP client: two ast_edits of one file accepted one
after the other, merged when apart and refused with working advice when they overlap."""


from conftest import calls

SOURCE = "def one():\n    print(1)\n\n\ndef two():\n    print(2)\n\n\ndef three():\n    log(3)\n"



def test_two_edits_apart_are_both_accepted(workspace):
    (workspace / "m.py").write_text(SOURCE)
    out = calls(workspace, [
        ("ast_edit", {"pattern": "print($A)", "rewrite": "emit($A)", "path": "m.py"}),
        ("ast_edit", {"pattern": "log($A)", "rewrite": "emit($A)", "path": "m.py"}),
        ("resolve", {"edit_id": "edit_1", "action": "accept"}),
        ("resolve", {"edit_id": "edit_2", "action": "accept"}),
    ])
    assert [err for err, _ in out] == [False] * 4, out
    assert "rebased onto later changes to m.py" in out[3][1], out[3][1]
    assert (workspace / "m.py").read_text() == SOURCE.replace("print(", "emit(").replace("log(", "emit(")


def test_overlapping_edits_are_refused_and_the_advice_works(workspace):
    (workspace / "m.py").write_text(SOURCE)
    out = calls(workspace, [
        ("ast_edit", {"pattern": "print($A)", "rewrite": "emit($A)", "path": "m.py"}),
        ("ast_edit", {"pattern": "print($A)", "rewrite": "show($A)", "path": "m.py"}),
        ("resolve", {"edit_id": "edit_1", "action": "accept"}),
        ("resolve", {"edit_id": "edit_2", "action": "accept"}),
        ("resolve", {"edit_id": "edit_2", "action": "discard"}),
        ("ast_edit", {"pattern": "emit($A)", "rewrite": "show($A)", "path": "m.py"}),
        ("resolve", {"edit_id": "edit_3", "action": "accept"}),
    ])
    err, refused = out[3]
    assert err, refused
    assert "in m.py, its edits of line 2 and line 6 overlap" in refused, refused
    assert "discard edit_2 and stage it again" in refused, refused
    assert [e for e, _ in out[4:]] == [False, False, False], out
    assert (workspace / "m.py").read_text() == SOURCE.replace("print(", "show(")
