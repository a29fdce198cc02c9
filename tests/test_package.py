import subprocess
import sys


def test_import_makes_no_network_connection():
    code = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise RuntimeError('network access during import')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "socket.getaddrinfo = refuse\n"
        "import hasbench, hasbench.scenario, hasbench.trace, hasbench.envs.base\n"
        "print(hasbench.__version__)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()


def test_environment_yml_declares_the_same_dependencies_as_pyproject():
    import re
    import tomllib
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + project["optional-dependencies"]["dev"]
    env = yaml.safe_load((root / "environment.yml").read_text())["dependencies"]
    conda = [d for d in env if isinstance(d, str)]
    pip = next(d["pip"] for d in env if isinstance(d, dict))

    def name(spec):
        return re.split(r"[<>=!]", spec, maxsplit=1)[0].strip().lower()

    declared = {
        name(d): d.replace(" ", "") for d in conda + pip if name(d) not in {"python", "pip"}
    }
    assert declared == {name(d): d.replace(" ", "") for d in wanted}
