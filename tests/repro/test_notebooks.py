"""repro.notebooks.dpdro_cli: the command line as a chapter shows it."""

from repro.notebooks import dpdro_cli, wrap_transcript_line


def test_dpdro_cli_prints_the_command_and_returns_its_status(capsys, tmp_path):
    assert dpdro_cli("catalog", "list", cwd=tmp_path) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "$ dpdro catalog list" and out[1].startswith("catalog: epsilon in [")
    assert dpdro_cli("certify", "missing.json", cwd=tmp_path) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("dpdro: error: noise file must be a readable UTF-8 file, got 'missing.json'")


def test_a_wrapped_command_pastes_into_a_shell(capsys, tmp_path):
    args = ("certify", "missing-" + "x" * 40 + ".json", "--epsilon", "1", "--sensitivity", "1")
    dpdro_cli(*args, cwd=tmp_path)
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(" \\") and not out[1].endswith("\\") and len(out[0]) <= 80
    assert " ".join(x.rstrip(" \\").strip() for x in out[:2]) == "$ dpdro " + " ".join(args)


def test_transcript_lines_break_at_clauses_within_80_columns():
    line = ("file certificate holds: l2 noise for (epsilon, delta) = (1, 0.001), sensitivity 1, "
            "certify_delta gives 0.0010995572168292628 > delta = 0.001")
    lines = wrap_transcript_line(line)
    assert all(len(x) <= 80 for x in lines) and lines[1].startswith("    ")
    assert " ".join(x.strip() for x in lines) == line
    # a parenthesised pair and a comparison stay on one line; breaks follow a comma
    assert all(("(1," in x) == ("0.001)" in x) for x in lines)
    assert any("delta = 0.001" in x for x in lines) and lines[0].endswith(",")
    assert wrap_transcript_line("short") == ["short"]
    assert wrap_transcript_line("x" * 90) == ["x" * 90]  # nothing to break at
