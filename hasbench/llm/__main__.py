"""``python -m hasbench.llm``: run a local model's process, or check the llama.cpp build.

- ``python -m hasbench.llm serve NAME [PARENT_PID]``: answer requests for the local
  model NAME on standard input and output, ending with the process PARENT_PID
  (:func:`hasbench.llm.llama.serve`; :mod:`hasbench.llm.local` starts it).
- ``python -m hasbench.llm check-build``: exit 1, saying why, when the installed llama.cpp
  would not run on every x86-64 machine with AVX2 (``make setup-local`` runs it).
"""

import sys

from hasbench.llm.llama import build_problem, serve


def main(argv: list[str]) -> int:
    """Run the command in ``argv``; return the exit status."""
    if argv[:1] == ["serve"] and len(argv) in (2, 3):
        return serve(argv[1], int(argv[2]) if len(argv) == 3 else None)
    if argv == ["check-build"]:
        problem = build_problem()
        print(problem or "llama.cpp: a portable build (AVX2, no AVX-512 or AMX)")
        return 1 if problem else 0
    print("usage: python -m hasbench.llm serve NAME [PARENT_PID] | check-build", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
