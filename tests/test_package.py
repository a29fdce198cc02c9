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
