"""repro.notebooks.dpdro_cli: the command line as a chapter shows it."""

from repro.notebooks import dpdro_cli


def test_dpdro_cli_prints_the_command_and_returns_its_status(capsys, tmp_path):
    assert dpdro_cli("catalog", "list", cwd=tmp_path) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "$ dpdro catalog list" and out[1].startswith("catalog: epsilon in [")
    assert dpdro_cli("certify", "missing.json", cwd=tmp_path) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("dpdro: error: noise file must be a readable UTF-8 file, got 'missing.json'")
