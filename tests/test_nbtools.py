from recode_lib.runner.nbtools import is_stripped, main, new_notebook, strip, write_notebook


def test_written_notebook_is_stripped_with_tagged_parameters(tmp_path):
    path = write_notebook(
        new_notebook([("md", "# t"), ("params", "X = 1"), ("code", "X")]), tmp_path / "00_t.ipynb"
    )
    import json

    nb = json.loads(path.read_text())
    assert nb["cells"][1]["metadata"]["tags"] == ["parameters"]
    assert is_stripped(path)


def test_strip_removes_outputs_and_check_reports_them(tmp_path, capsys):
    import json

    path = write_notebook(new_notebook([("code", "1")]), tmp_path / "n.ipynb")
    nb = json.loads(path.read_text())
    nb["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "1"}]
    nb["cells"][0]["execution_count"] = 1
    path.write_text(json.dumps(nb))
    assert main(["check", str(path)]) == 1 and "carries outputs" in capsys.readouterr().err
    assert strip(path) and is_stripped(path) and main(["check", str(path)]) == 0
