"""evalrun's LiveCodeBench grading harness (one answer, all its tests).

Run by evalrun as `python3 -I -c <this file's text>` (in the sandbox, or
plainly in tests); compiled into evalrun from scorers/lcb_harness.py.

stdin: one JSON object
    {"code": str, "inputs": [str], "outputs": [str], "fn_name": str or null,
     "timeout": int (seconds per test; the official 6), "profile": "official" | "fixed"}
stdout: one line  "@@evalrun-lcb-result " + JSON  (nothing else is written to
the real standard output: the program's fd 1 is /dev/null while it runs)
    {"results": [true | -2 | -3 | -4, ...],   one per test run, as the official
     "error_code": -2 | -3 | -4 | null, "error_message": str, "error": str,
     "output": str, "inputs": str, "expected": str,  (truncated as official)
     "stage": "compile" | "tests" | "done", "exception": str (class name) }
or {"lost": repr} when the program raised what the official child process
dies of (SystemExit from a call-based method, KeyboardInterrupt): the
official grader then has no result and counts [-2] (see lcb_grade.h).

Profile `official` matches LiveCodeBench/LiveCodeBench @ 28fef95e,
lcb_runner/evaluation/testing_util.py run_test (called in a child process by
compute_code_generation_metrics.py check_correctness), verdict for verdict:
  * stdin programs: an `if __name__ == '__main__':` block that is the last
    statement is inlined; top-level imports are hoisted and the rest of the
    program becomes the body of one function, called once per test with
    sys.stdin replaced by the official mock (read() and readlines() return the
    whole input, readlines() split on "\n" without line ends; readline() reads
    on; buffer.read() gives the bytes, buffer.readline() always the first
    line; not iterable) and open() by mock_open(read_data=input); print goes to
    a StringIO; exit() and SystemExit end the test normally.
  * output compared as stripped lines; a line that differs passes when all
    its whitespace-separated fields parse as Decimal and are equal.
  * call-based (LeetCode): `class Solution` instantiated, the method called
    with each JSON line of the input; a tuple result becomes a list; == the
    expected JSON value.
  * per test a SIGALRM after `timeout` s (TimeoutException, caught as the
    official does); the first failing test stops; any error while loading the
    program or the tests gives [-4] "Error during testing: ...".
  * reliability_guard's disabled functions (os.kill, quit, ...), the
    recursion limit 50000 and int max str digits 50000.

Profile `fixed` differs only where the official has false negatives on
correct programs (tests/fixtures/livecodebench/README.md lists them): a stdin
program runs as a script (its own module, __name__ == "__main__", so
`global` and a main guard anywhere work) with a real file on fd 0 and fd 1
(every way of reading stdin and writing stdout works: iteration,
buffer.readline, readlines with line ends, sys.stdout.buffer, os.write), and a
call-based result has its tuples turned into lists at every depth.
"""

import ast
import faulthandler
import io
import json
import os
import signal
import sys
import time
from decimal import Decimal
from types import ModuleType
from unittest import mock

MARK = "@@evalrun-lcb-result "

_FROM_STAR = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math",
              "random", "statistics", "itertools", "functools", "operator", "io", "sys",
              "json", "builtins", "typing")
_PLAIN = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math",
          "random", "statistics", "itertools", "functools", "operator", "io", "sys", "json")
# The official `import_string`, the same text: every graded program starts with it.
PRELUDE = ("".join("from %s import *\n" % m for m in _FROM_STAR) +
           "".join("import %s\n" % m for m in _PLAIN) + "sys.setrecursionlimit(50000)\n")

_write = os.write
_dumps = json.dumps


class TimeoutException(Exception):
    pass


def _on_alarm(signum, frame):
    print("timeout occured: alarm went off")
    raise TimeoutException


class LoadError(Exception):
    """An exception while loading the program or the tests (official: [-4])."""

    def __init__(self, cause):
        super().__init__(str(cause))
        self.cause = cause


def shorten(value, length=300):
    text = value if isinstance(value, str) else str(value)
    if len(text) <= length:
        return text
    return text[: length // 2] + "...(truncated) ..." + text[-length // 2:]


# ---------------------------------------------------------------------------
# The official stdin program transform.

def inline_main_guard(code):
    try:
        tree = ast.parse(code)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            return ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)
    except Exception:
        pass
    return code


def wrap_in_function(code):
    try:
        tree = ast.parse(code)
        hoisted = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        rest = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
        func = ast.FunctionDef(
            name="wrapped_function",
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=rest, decorator_list=[], lineno=-1)
        return PRELUDE + "\n" + ast.unparse(hoisted) + "\n" + ast.unparse(func)
    except Exception:
        return code


def load_program(code, timeout):
    signal.alarm(timeout)
    try:
        module = ModuleType("tmp_sol", "")
        exec(code, module.__dict__)
        loaded = module.Solution() if "class Solution" in code else module
        assert loaded is not None
    finally:
        signal.alarm(0)
    return loaded


def find_callable(loaded, name):
    return getattr(loaded, name, None)


# ---------------------------------------------------------------------------
# The official stdin and stdout stand-ins.

class OfficialBuffer:
    def __init__(self, text):
        self.data = text.encode("utf-8")

    def read(self, *args):
        return self.data

    def readline(self, *args):
        return self.data.split(b"\n")[0] + b"\n"


class OfficialStdin:
    def __init__(self, text):
        self.text = text
        self._stream = io.StringIO(text)
        self.buffer = OfficialBuffer(text)

    def read(self, *args):
        return self.text

    def readline(self, *args):
        return self._stream.readline(*args)

    def readlines(self, *args):
        return self.text.split("\n")

    def __getattr__(self, name):
        return getattr(self._stream, name)


class CapturedStdout(list):
    def __enter__(self):
        self._saved = sys.stdout
        self._sink = io.StringIO()
        self._sink.close = lambda x: 1  # as the official: close() itself fails
        sys.stdout = self._sink
        return self

    def __exit__(self, *exc):
        self.append(self._sink.getvalue())
        del self._sink
        sys.stdout = self._saved


def run_with_official_stdin(function, text):
    """Calls function() as the official call_method does (its patches that
    land on the process's own stdin before it is replaced do nothing the
    program can see)."""
    if isinstance(text, list):
        text = "\n".join(text)
    with mock.patch("builtins.open", mock.mock_open(read_data=text)):
        with mock.patch("sys.stdin", OfficialStdin(text)):
            try:
                return function()
            except SystemExit:
                pass


# ---------------------------------------------------------------------------
# Comparisons.

def stripped_lines(text):
    return [line.strip() for line in text.strip().split("\n")]


def decimals(line):
    try:
        return True, [Decimal(field) for field in line.split()]
    except Exception:
        return False, []


def compare_stdout(got, expected):
    """None when equal, else the official wrong-answer message."""
    got_lines, want_lines = stripped_lines(got), stripped_lines(expected)
    if len(got_lines) != len(want_lines):
        return "Wrong answer: mismatched output length"
    for i, (g, w) in enumerate(zip(got_lines, want_lines)):
        message = "Wrong answer at output_line_idx=%d: %s != %s" % (i, shorten(g), shorten(w))
        if g == w:
            continue
        ok_g, dec_g = decimals(g)
        if not ok_g:
            return message
        ok_w, dec_w = decimals(w)
        if not ok_w or dec_g != dec_w:
            return message
    return None


def lists_all_the_way(value):
    if isinstance(value, (list, tuple)):
        return [lists_all_the_way(v) for v in value]
    if isinstance(value, dict):
        return {k: lists_all_the_way(v) for k, v in value.items()}
    return value


def failure(results, code, message, test_input, expected, **more):
    report = {"error_code": code, "error_message": message,
              "inputs": shorten(test_input), "expected": shorten(expected)}
    report.update(more)
    return results, report


def exception_failure(results, e, test_input, expected):
    if "timeoutexception" in repr(e).lower():
        results.append(-3)
        return failure(results, -3, "Time Limit Exceeded", test_input, expected,
                       error=repr(e), exception=type(e).__name__)
    results.append(-4)
    return failure(results, -4, "Runtime Error", test_input, expected,
                   error=repr(e), exception=type(e).__name__)


# ---------------------------------------------------------------------------
# Call-based (LeetCode) problems.

def grade_call_based(job, timeout):
    try:
        loaded = load_program(PRELUDE + "\n\n" + job["code"], timeout)
        method = find_callable(loaded, job["fn_name"])
        if method is None:
            raise TypeError("cannot unpack non-iterable NoneType object")
        args_list = [[json.loads(line) for line in text.split("\n")] for text in job["inputs"]]
        wanted = [json.loads(text) for text in job["outputs"]]
    except Exception as e:
        raise LoadError(e)
    results, total = [], 0.0
    for args, want in zip(args_list, wanted):
        signal.alarm(timeout)
        faulthandler.enable()
        try:
            start = time.time()
            got = method(*args)
            total += time.time() - start
            signal.alarm(0)
            if job["profile"] == "fixed":
                got = lists_all_the_way(got)
            elif isinstance(got, tuple):
                got = list(got)
            same = got == want
            results.append(same)
            if not same:
                return failure(results, -2, "Wrong Answer", args, want, output=shorten(got))
        except Exception as e:
            signal.alarm(0)
            return exception_failure(results, e, args, want)
        finally:
            signal.alarm(0)
            faulthandler.disable()
    return results, {"execution time": total}


# ---------------------------------------------------------------------------
# Standard-input programs.

def grade_stdin(job, timeout, load, run_one):
    """The official grade_stdio loop; `load` makes the program, `run_one(program,
    input)` runs it once and returns what it printed."""
    try:
        program = load(job["code"], timeout)
    except Exception as e:
        raise LoadError(e)
    results, total = [], 0.0
    for text, want in zip(job["inputs"], job["outputs"]):
        signal.alarm(timeout)
        faulthandler.enable()
        try:
            start = time.time()
            got = run_one(program, text)
            total += time.time() - start
            signal.alarm(0)
        except Exception as e:
            signal.alarm(0)
            return exception_failure(results, e, text, want)
        finally:
            signal.alarm(0)
            faulthandler.disable()
        message = compare_stdout(got, want)
        if message is not None:
            results.append(-2)
            return failure(results, -2, message, text, want, output=shorten(got))
        results.append(True)
    return results, {"execution time": total}


def load_official(code, timeout):
    program = wrap_in_function(inline_main_guard(code))
    function = find_callable(load_program(program, timeout), "wrapped_function")
    if function is None:
        raise TypeError("cannot unpack non-iterable NoneType object")
    return function


def run_official(function, text):
    with CapturedStdout() as captured:
        run_with_official_stdin(function, text)
    return captured[0]


def load_fixed(code, timeout):
    """The program compiled once as a script, run in a fresh module each test.
    A program that does not parse or has no statements fails to load as the
    official's does, with the same message."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        tree = None
    if tree is None or not tree.body:
        load_official(code, timeout)
    signal.alarm(timeout)
    try:
        return compile(PRELUDE + code, "<string>", "exec")
    finally:
        signal.alarm(0)


def run_fixed(compiled, text):
    # memfd: nothing on disk, and os.unlink is disabled (as the official's).
    with open(os.memfd_create("lcb-stdin"), "w+b") as fin, \
            open(os.memfd_create("lcb-stdout"), "w+b") as fout:
        fin.write(text.encode("utf-8"))
        fin.seek(0)
        saved = (os.dup(0), os.dup(1), sys.stdin, sys.stdout)
        os.dup2(fin.fileno(), 0)
        os.dup2(fout.fileno(), 1)
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)),
                                     encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)),
                                      encoding="utf-8")
        try:
            exec(compiled, {"__name__": "__main__", "__builtins__": __builtins__})
        except SystemExit:
            pass
        finally:
            try:
                sys.stdout.flush()
            except Exception:
                pass
            os.dup2(saved[0], 0)
            os.dup2(saved[1], 1)
            os.close(saved[0])
            os.close(saved[1])
            sys.stdin, sys.stdout = saved[2], saved[3]
        fout.seek(0)
        return fout.read().decode("utf-8", errors="replace")


# ---------------------------------------------------------------------------
# The official reliability_guard (what the program finds disabled).

def disable_functions():
    faulthandler.disable()
    import builtins
    builtins.quit = None
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid",
                 "fork", "forkpty", "killpg", "rename", "renames", "truncate", "replace", "unlink",
                 "fchmod", "fchown", "chmod", "chown", "chroot", "lchflags", "lchmod", "lchown",
                 "getcwd", "chdir"):
        setattr(os, name, None)
    import shutil
    shutil.rmtree = shutil.move = shutil.chown = None
    import subprocess
    subprocess.Popen = None
    builtins.help = None
    for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[name] = None


def grade(job):
    timeout = int(job.get("timeout", 6))
    try:
        if job.get("fn_name") is not None:
            results, report = grade_call_based(job, timeout)
        elif job["profile"] == "fixed":
            results, report = grade_stdin(job, timeout, load_fixed, run_fixed)
        else:
            results, report = grade_stdin(job, timeout, load_official, run_official)
        report["stage"] = "tests" if report.get("error_code") is not None else "done"
    except LoadError as e:
        results = [-4]
        report = {"error_code": -4, "error_message": "Error during testing: %s" % e.cause,
                  "stage": "compile", "exception": type(e.cause).__name__}
    except Exception as e:  # the official run_test's own catch-all
        results = [-4]
        report = {"error_code": -4, "error_message": "Error during testing: %s" % e,
                  "stage": "tests", "exception": type(e).__name__}
    report["results"] = results
    return report


def main():
    job = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    if job.get("profile", "official") not in ("official", "fixed"):
        raise SystemExit("lcb_harness: unknown profile %r" % job.get("profile"))
    job.setdefault("profile", "official")
    result_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    # As in the official child process: the original stdin closed, /dev/null instead.
    sys.stdin.close()
    sys.stdin = open(os.devnull)
    sys.set_int_max_str_digits(50000)
    signal.signal(signal.SIGALRM, _on_alarm)
    disable_functions()
    try:
        report = grade(job)
    except BaseException as e:  # what ends the official child without a result
        report = {"lost": repr(e)}
    try:
        line = _dumps(report)
    except Exception as e:
        line = _dumps({"lost": "result not serialisable: %r" % e})
    _write(result_fd, ("\n" + MARK + line + "\n").encode("utf-8"))
    os._exit(0)


if __name__ == "__main__":
    main()
