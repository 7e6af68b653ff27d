"""evalrun's LiveCodeBench harness: runs ONE answer's program in the sandbox,
one test at a time, and reports what the program produced. It never sees an
expected output and never judges: the expected outputs, the comparison and
the verdict live only in evalrun (scorers/livecodebench/lcb_judge.h). Whatever the program
does to this process (patch a function, forge a frame, exit) can at most
claim an output, which evalrun then compares like any other.

Run by evalrun as `python3 -I -c <this file's text>` (in the sandbox, or
plainly in tests); compiled into evalrun from scorers/livecodebench/lcb_harness.py.

The conversation, one JSON object per line each way:
  evalrun -> stdin:  {"code": str, "fn_name": str or null, "timeout": int,
                      "profile": "official" | "fixed"}      once, first;
                     {"test": i, "input": str}   test i, sent only after
                     evalrun judged test i - 1; end of input: exit.
  stdout -> evalrun: {"frame": "ready"}                     before the code loads;
                     {"frame": "loaded"} or {"frame": "load_error",
                      "exception": class, "message": str(e)};
                     {"frame": "test", "test": i, "time": s, and
                       "printed": str                         (stdin programs), or
                       "value": typed, "repr": str, "args": str (call-based), or
                       "raised": class, "error": repr(e)};
                     {"frame": "lost", "why": repr(e)}  what ends the official
                      child process without a result (SystemExit out of a
                      LeetCode method, KeyboardInterrupt, ...).
The program's own fd 1 is /dev/null while it runs; the frames go out on a
copy of the original stdout.

Typed values (call-based results), so that evalrun can apply Python's `==`:
null, true/false, a string, a list, {"i": decimal} an int, {"f": float.hex()}
a float, {"t": [...]} a tuple, {"d": [[key, value], ...]} a dict, NumPy
scalars as the same with "np": 1, {"nd": shape, "v": flat items} an ndarray,
{"o": type name} anything else (never equal to an expected value).

Profile `official` runs the program as LiveCodeBench/LiveCodeBench @ 28fef95e,
lcb_runner/evaluation/testing_util.py does (run_test, in the child process
of compute_code_generation_metrics.py check_correctness):
  * stdin programs: an `if __name__ == '__main__':` block that is the last
    statement is inlined; top-level imports are hoisted and the rest of the
    program becomes the body of one function, called once per test with
    sys.stdin replaced by the official mock (read() and readlines() return the
    whole input, readlines() split on "\\n" without line ends; readline() reads
    on; buffer.read() gives the bytes, buffer.readline() always the first
    line; not iterable), the read, readline and readlines of the process's own
    stdin object patched (a name bound to it before the test, `from sys import
    stdin` or the prelude's, reads the input, readline() line by line without
    line ends), and open() by mock_open(read_data=input); print goes to a
    StringIO; exit() and SystemExit end the test normally.
  * call-based (LeetCode): `class Solution` instantiated, the method called
    with each JSON line of the input.
  * per test a SIGALRM after `timeout` s (TimeoutException, caught as the
    official does); any error while loading the program gives a load_error.
  * NumPy is loaded before the guard (the official grading process imports
    it at start), here when the code names numpy or a library built on it.
  * reliability_guard's disabled functions (os.kill, quit, ...), the
    recursion limit 50000 and int max str digits 50000.

Profile `fixed` differs only where the official has false negatives on
correct programs (tests/fixtures/livecodebench/README.md lists them): a stdin
program runs as a script (its own module, __name__ == "__main__", so
`global` and a main guard anywhere work) with a real file on fd 0 and fd 1
(every way of reading stdin and writing stdout works).
"""

import ast
import faulthandler
import io
import json
import os
import signal
import sys
import time
from types import ModuleType
from unittest import mock

_FROM_STAR = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math",
              "random", "statistics", "itertools", "functools", "operator", "io", "sys",
              "json", "builtins", "typing")
_PLAIN = ("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math",
          "random", "statistics", "itertools", "functools", "operator", "io", "sys", "json")
# The official `import_string`, the same text: every graded program starts with it.
PRELUDE = ("".join("from %s import *\n" % m for m in _FROM_STAR) +
           "".join("import %s\n" % m for m in _PLAIN) + "sys.setrecursionlimit(50000)\n")
# Libraries that load NumPy: a program naming one gets NumPy loaded before the guard.
_NUMPY_USERS = ("numpy", "scipy", "pandas", "sklearn", "networkx")

_write = os.write
_dumps = json.dumps
_loads = json.loads
_np = None  # numpy, when loaded


class TimeoutException(Exception):
    pass


def _on_alarm(signum, frame):
    print("timeout occured: alarm went off")
    raise TimeoutException


def shorten(value, length=300):
    text = value if isinstance(value, str) else str(value)
    if len(text) <= length:
        return text
    return text[: length // 2] + "...(truncated) ..." + text[-length // 2:]


# ---------------------------------------------------------------------------
# The channel.

class Channel:
    def __init__(self, in_fd, out_fd):
        self._in = os.fdopen(in_fd, "rb", buffering=0)
        self._pending = b""
        self._out = out_fd

    def send(self, frame):
        try:
            line = _dumps(frame, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: what it printed, replaced
            line = _dumps(frame, ensure_ascii=False).encode("utf-8", "replace")
        data = line + b"\n"
        while data:
            data = data[_write(self._out, data):]

    def receive(self):
        """The next JSON object, or None at the end of the input."""
        while b"\n" not in self._pending:
            chunk = self._in.read(1 << 16)
            if not chunk:
                return None
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return _loads(line.decode("utf-8"))


# ---------------------------------------------------------------------------
# Typed values.

def typed(v, depth=0):
    if depth > 200:
        return {"o": "too deep"}
    d = depth + 1
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        try:
            return {"i": str(int(v))}
        except ValueError:  # over int max str digits
            return {"o": "int"}
    if isinstance(v, float):
        return {"f": float(v).hex(), "np": 1} if _np is not None and isinstance(v, _np.floating) \
            else {"f": float(v).hex()}
    if isinstance(v, str):
        return str(v)
    if isinstance(v, list):
        return [typed(x, d) for x in v]
    if isinstance(v, tuple):
        return {"t": [typed(x, d) for x in v]}
    if isinstance(v, dict):
        return {"d": [[typed(k, d), typed(x, d)] for k, x in v.items()]}
    if _np is not None:
        if isinstance(v, _np.bool_):
            return {"b": bool(v), "np": 1}
        if isinstance(v, _np.integer):
            return {"i": str(int(v)), "np": 1}
        if isinstance(v, _np.floating):
            return {"f": float(v).hex(), "np": 1}
        if isinstance(v, _np.ndarray):
            return {"nd": list(v.shape), "v": [typed(x, d) for x in v.ravel().tolist()]}
    return {"o": type(v).__name__}


def lists_all_the_way(value):
    if isinstance(value, (list, tuple)):
        return [lists_all_the_way(v) for v in value]
    if isinstance(value, dict):
        return {k: lists_all_the_way(v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------
# Loading the program (the official stdin transform).

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


def must_find(loaded, name):
    found = getattr(loaded, name, None)
    if found is None:  # the official's grade_* return None: unpacking it fails
        raise TypeError("cannot unpack non-iterable NoneType object")
    return found


def load_official(code, timeout):
    return must_find(load_program(wrap_in_function(inline_main_guard(code)), timeout), "wrapped_function")


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


def load_call_based(code, timeout, fn_name):
    return must_find(load_program(PRELUDE + "\n\n" + code, timeout), fn_name)


# ---------------------------------------------------------------------------
# Running one test.

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


def run_official(function, text):
    """Calls function() as the official call_method does: the process's own
    stdin object's read, readline and readlines patched first, then sys.stdin
    replaced by the mock, open() by mock_open; print captured."""
    lines = iter(text.split("\n"))
    sink = io.StringIO()
    sink.close = lambda x: 1  # as the official: close() itself fails
    saved = sys.stdout
    sys.stdout = sink
    try:
        with mock.patch("sys.stdin.read", lambda *a: text), \
                mock.patch("sys.stdin.readlines", lambda *a: text.split("\n")), \
                mock.patch("sys.stdin.readline", lambda *a: next(lines)), \
                mock.patch("sys.stdin", OfficialStdin(text)), \
                mock.patch("builtins.open", mock.mock_open(read_data=text)):
            try:
                function()
            except SystemExit:
                pass
    finally:
        sys.stdout = saved
    return sink.getvalue()


def run_fixed(compiled, text):
    # memfd: nothing on disk, and os.unlink is disabled (as the official's).
    with open(os.memfd_create("lcb-stdin"), "w+b") as fin, \
            open(os.memfd_create("lcb-stdout"), "w+b") as fout:
        fin.write(text.encode("utf-8"))
        fin.seek(0)
        saved = (os.dup(0), os.dup(1), sys.stdin, sys.stdout)
        os.dup2(fin.fileno(), 0)
        os.dup2(fout.fileno(), 1)
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8")
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


def timed(timeout, call):
    """call() under the official per-test alarm: (result, seconds)."""
    signal.alarm(timeout)
    faulthandler.enable()
    try:
        start = time.time()
        result = call()
        spent = time.time() - start
        signal.alarm(0)
        return result, spent
    finally:
        signal.alarm(0)
        faulthandler.disable()


def run_test(job, program, index, text):
    timeout = job["timeout"]
    frame = {"frame": "test", "test": index}
    try:
        if job["fn_name"] is None:
            run = run_fixed if job["profile"] == "fixed" else run_official
            frame["printed"], frame["time"] = timed(timeout, lambda: run(program, text))
            return frame
        args = [_loads(line) for line in text.split("\n")]
        frame["args"] = shorten(args)
        got, frame["time"] = timed(timeout, lambda: program(*args))
    except Exception as e:
        frame["raised"], frame["error"] = type(e).__name__, repr(e)
        return frame
    shown = lists_all_the_way(got) if job["profile"] == "fixed" else list(got) if isinstance(got, tuple) else got
    frame["value"], frame["repr"] = typed(got), shorten(shown)
    return frame


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


def load_numpy_if_named(code):
    global _np
    if any(name in code for name in _NUMPY_USERS):
        try:
            import numpy
            _np = numpy
        except ImportError:
            pass


def load(job):
    timeout = job["timeout"]
    if job["fn_name"] is not None:
        return load_call_based(job["code"], timeout, job["fn_name"])
    return (load_fixed if job["profile"] == "fixed" else load_official)(job["code"], timeout)


def converse(channel, job):
    try:
        program = load(job)
    except Exception as e:
        channel.send({"frame": "load_error", "exception": type(e).__name__, "message": str(e)})
        return
    channel.send({"frame": "loaded"})
    while True:
        request = channel.receive()
        if request is None:
            return
        channel.send(run_test(job, program, request["test"], request["input"]))


def main():
    channel_in, channel_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    # As in the official child process: the original stdin closed, /dev/null instead.
    sys.stdin.close()
    sys.stdin = open(os.devnull)
    channel = Channel(channel_in, channel_out)
    channel.send({"frame": "ready"})
    job = channel.receive()
    if job is None:
        os._exit(0)
    job.setdefault("profile", "official")
    job["timeout"] = int(job.get("timeout", 6))
    sys.set_int_max_str_digits(50000)
    signal.signal(signal.SIGALRM, _on_alarm)
    load_numpy_if_named(job["code"])
    disable_functions()
    try:
        converse(channel, job)
    except BaseException as e:  # what ends the official child without a result
        try:
            channel.send({"frame": "lost", "why": repr(e)})
        except BaseException:
            pass
    os._exit(0)


if __name__ == "__main__":
    main()
