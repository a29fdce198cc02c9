"""A warm sandbox worker: one interpreter with pytest imported that forks a child per run.

This file is a script, never imported by hasbench: :mod:`hasbench.envs.coding.warm` binds
it read-only into a bubblewrap sandbox and starts it as ``python -s -P warm_worker.py FD``
with the sandbox's own environment, where ``FD`` is a sequenced-packet socket to the host.
It imports only the standard library and pytest, before any run, so no file of a workspace
is ever loaded into it; it makes itself non-dumpable, so code of a run (the same user id)
cannot trace it or read its memory. Before any run it also builds the pytest configuration
every pytest session starts from (plugins registered, options declared: about a fifth of
a small session's time), from nothing but the plugin arguments hasbench's runs pass; a
run's first ``pytest.main`` takes its copy instead of building the same one again.

Per request (JSON, with the run's output pipe and, optionally, its results channel passed
as file descriptors) it forks a child that starts a new session, takes the pipes as its
standard streams (the secret, if any, as standard input), closes every other descriptor,
sets the run's environment, working directory and resource limits, and then either runs
``python -m pytest ...`` or a ``python -s -P SCRIPT ...`` in the already warm interpreter
(``mode`` "pytest" or "script", with ``sys.path`` as that command line would make it), or
executes the command (``mode`` "exec"). When the child ends, the worker kills every other
process of the sandbox it can signal (whatever the run left behind), empties ``/tmp`` and
``/dev/shm``, and answers ``{"exit": code}`` (128 + signal when a signal ended the child).
So every run starts from the same state: the warm interpreter as it was before any run.
"""

import ctypes
import gc
import importlib
import json
import os
import pathlib
import resource
import runpy
import signal
import socket
import sys
import time
import traceback

CHANNEL_VARIABLE = "HASBENCH_RESULTS_FD"
PR_SET_DUMPABLE = 4
WARM_MODULES = ("_pytest._argcomplete", "difflib", "faulthandler", "pdb", "tomllib", "unittest",
                "xml.etree.ElementTree")  # fmt: skip
"""Modules a pytest session imports lazily (imported once here)."""
OPTIONAL_WARM_MODULES = ("readline",)
"""Modules a pytest session imports where they exist (readline: its capture plugin)."""
PREPARED_PLUGIN_ARGS = ("-p", "no:cacheprovider")
"""The plugin arguments of every pytest run hasbench starts; the prepared configuration is
built from them, and a session whose arguments name other plugins builds its own."""
PREPARED_PROGRAMS = ("pytest.main()", "python -m pytest")
"""The program names pytest gives the sessions hasbench starts: its hidden-test runner's
``pytest.main`` and a run's ``python -m pytest``."""
PREPARED: dict = {}
"""The prepared pytest configurations, by the options pytest passes ``get_config``."""
SCRATCH = ("/tmp", "/dev/shm")
LIMITS = {
    "cpu": resource.RLIMIT_CPU,
    "as": resource.RLIMIT_AS,
    "fsize": resource.RLIMIT_FSIZE,
    "nofile": resource.RLIMIT_NOFILE,
    "nproc": resource.RLIMIT_NPROC,
    "core": resource.RLIMIT_CORE,
}


def main() -> int:
    """Serve runs until the host closes the socket."""
    control = socket.socket(fileno=int(sys.argv[1]))
    _dumpable(False)
    import pytest  # noqa: F401 - the point of the worker: imported once, before any run
    from _pytest.config import default_plugins

    for name in (*WARM_MODULES, *(f"_pytest.{plugin}" for plugin in default_plugins)):
        importlib.import_module(name)
    for name in OPTIONAL_WARM_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    _prepare_pytest_config()
    gc.freeze()  # what the worker loaded is never collected: a run's collections skip it

    control.send(b'{"ready": true}')
    while True:
        message, fds, _, _ = socket.recv_fds(control, 1 << 20, 4)
        if not message:
            return 0
        request = json.loads(message)
        secret_read, secret_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(secret_write)
            _child(request, fds, secret_read)
        os.close(secret_read)
        for fd in fds:
            os.close(fd)
        try:
            os.write(secret_write, request.get("secret", "").encode())
        except BrokenPipeError:
            pass
        os.close(secret_write)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        _clean()
        control.send(json.dumps({"exit": code if code >= 0 else 128 - code}).encode())


def _prepare_pytest_config() -> None:
    """Build the configurations pytest sessions start from; a run's session takes one once.

    pytest's ``get_config`` makes a plugin manager, registers the default plugins and lets
    them declare their options; what it makes depends only on the ``-p`` arguments (the
    plugins blocked), the program name (pytest 9 passes one) and the invocation
    (arguments, plugins, working directory), which the run's call fills in. It reads no
    file. Each run is a forked child, so each session gets its own copy; a second session
    in the same run, or one with other ``-p`` arguments, another program name or pytest's
    debug tracing, builds a fresh configuration as usual.
    """
    try:
        import _pytest.config as pytest_config

        fresh = pytest_config.get_config
        PREPARED.clear()
        for prog in PREPARED_PROGRAMS:
            try:
                PREPARED[(("prog", prog),)] = fresh(list(PREPARED_PLUGIN_ARGS), prog=prog)
            except TypeError:  # a pytest whose get_config takes no program name
                PREPARED[()] = fresh(list(PREPARED_PLUGIN_ARGS))
                break
    except Exception:  # noqa: BLE001 - a pytest this does not fit: sessions build their own
        PREPARED.clear()
        return

    def get_config(args=None, plugins=None, **options):
        pytest_config.get_config = fresh
        config = PREPARED.get(tuple(sorted(options.items())))
        plugin_args = _plugin_args(args or ())
        if config is None or plugin_args != PREPARED_PLUGIN_ARGS or os.environ.get("PYTEST_DEBUG"):
            return fresh(args, plugins, **options)
        config.invocation_params = type(config).InvocationParams(
            args=args or (), plugins=plugins, dir=pathlib.Path.cwd()
        )
        return config

    pytest_config.get_config = get_config


def _plugin_args(args) -> tuple:
    """The arguments that name plugins: each ``-p`` with its value, each ``-pVALUE``."""
    found = []
    for i, arg in enumerate(args):
        if isinstance(arg, str) and arg.startswith("-p"):
            found.append(arg)
            if arg == "-p" and i + 1 < len(args):
                found.append(args[i + 1])
    return tuple(found)


def _dumpable(value: bool) -> None:
    """Whether processes of the same user may trace this one (and read its memory)."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, int(value), 0, 0, 0)


def _clean() -> None:
    """Kill every process the run left behind, then empty the scratch directories."""
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            break  # nothing left (the sandbox's init reaps the killed)
        time.sleep(0.001)
    for folder in SCRATCH:
        if not os.access(folder, os.W_OK):
            continue
        for entry in os.scandir(folder):
            _remove(entry.path)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, 0o700)
        for entry in os.scandir(path):
            _remove(entry.path)
        os.rmdir(path)
    else:
        os.unlink(path)


def _child(request: dict, fds: list[int], secret: int) -> None:
    """Become the run (never returns)."""
    code = 1
    try:
        _dumpable(True)  # as a new process is: only the worker stays out of reach
        os.setsid()
        os.dup2(secret, 0)
        os.dup2(fds[0], 1)
        os.dup2(fds[0], 2)
        env = dict(request["env"])
        channel = fds[1] if len(fds) > 1 else 1 << 16
        os.closerange(3, channel)  # the control socket, the pipes' other copies
        if len(fds) > 1:
            os.set_inheritable(channel, True)
            env[CHANNEL_VARIABLE] = str(channel)
            os.closerange(channel + 1, 1 << 16)
        for name, (soft, hard) in request["limits"].items():
            resource.setrlimit(LIMITS[name], (soft, hard))
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(env)
        argv = request["argv"]
        if request["mode"] == "exec":
            try:
                os.execvpe(argv[0], argv, env)
            except OSError as exc:
                os.write(2, f"cannot execute {argv[0]}: {exc.strerror}\n".encode())
                os._exit(127)
        extra = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        if request["mode"] == "pytest":
            sys.path[:0] = [os.getcwd(), *extra]
            sys.argv = ["pytest", *argv[3:]]
            code = _main(lambda: runpy.run_module("pytest", run_name="__main__", alter_sys=True))
        else:
            sys.path[:0] = extra
            sys.argv = argv[3:]
            code = _main(lambda: runpy.run_path(argv[3], run_name="__main__"))
    except BaseException:  # noqa: BLE001 - whatever happens, the child must not return
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001
                pass
        os._exit(code)


def _main(run) -> int:
    """Run like the interpreter's top level: the exit code of SystemExit, 1 on an error."""
    try:
        run()
    except SystemExit as stop:
        if stop.code is None:
            return 0
        if isinstance(stop.code, int):
            return stop.code
        print(stop.code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
