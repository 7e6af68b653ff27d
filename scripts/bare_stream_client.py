#!/usr/bin/env python3
"""A bare streaming client for the speed part's requests, and the TTFT comparison.

Python 3.10+, standard library only. Loopback servers only (127.0.0.1 / ::1 / localhost).

  replay:  sends the speed part's requests again, byte for byte, from
           <job>/speed/requests.jsonl (each line {seq, step, role, attempt, round,
           concurrency, path, body, timed, streamed}) to the server, and writes
           one JSON line per timed request: {seq, step, round, concurrency,
           ttft_s, text_s, first_byte_s, done_s, http_status, error, prompt_ms,
           prompt_n}. The lines of one seq are sent in file order: a chat stream
           the server's parser refused and the raw route's /apply-template (not
           timed, "timed": false) before the /completion evalrun timed, as
           evalrun sent them (files without "timed": the last line of a seq is
           the timed one).
           Timing is what a bare client does: a kept-alive connection opened
           before the clock starts, t0 just before the request's bytes are
           written, the first token when the first event of the answer arrives
           (a chat chunk with a choice: llama-server sends its role chunk with the
           first generated token, before its output parser has text to show; on
           /completion its first event), the first text when the first one with
           content or reasoning_content text does (the bytes searched as they come,
           no other parsing before that), time.perf_counter_ns (monotonic), as
           evalrun's stream.h takes them.
           Requests of one conc round (same step, attempt, round, concurrency > 1)
           are sent at once from their own threads, released together, each
           thread sending its seq's lines in order; the others one at a time,
           in evalrun's order (by seq). Every request of
           the file is sent (warm-ups and the cold row too, so the server meets
           each measured request in the state evalrun found it in); only the
           measured ones are timed into the output.
  tap:     a loopback proxy between evalrun and the server (evalrun's card
           points at --listen) that times each request passing through it as a
           bare client at that place would: t0 when the request's last byte
           arrived from evalrun (its write returned), the first token when the
           first token event arrived from the server (stamped as the read
           returns, forwarded before it is parsed). One JSON line per answered
           request: {path, sha256 (of the body), http_status, first_byte_s,
           ttft_s, done_s}. Runs until killed.
  compare: joins evalrun's speed/samples.jsonl (rates.ttft_s, by seq) with the
           replay (--bare) and/or the tap (--tap, --requests) and checks each
           pair against max(2 %, 20 ms) of the bare client's TTFT. Replay:
           requests of concurrency 1 request by request; a round of C > 1 rank
           by rank (the k-th fastest of evalrun's round against the k-th
           fastest of the replayed round), judged only without a tap: which
           request waits for which slot, and where a random model's chat stream
           is refused and sent again, differ from one run of a round to the
           next, so a replayed queue is not the same requests' timing. Tap:
           every measured request against the tap's timing of the very same
           request (joined by its body's sha256). Prints a table and a
           PASS/FAIL line, writes a JSON summary. Exit 0 on PASS, 1 on FAIL,
           2 on bad input.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import socket
import statistics
import sys
import threading
import time

LOOPBACK = {"127.0.0.1", "::1", "localhost"}
# llama-server writes its chunks without spaces; a server that writes "key": "value" is matched too.
CONTENT_KEYS = (b'"content":"', b'"reasoning_content":"', b'"content": "', b'"reasoning_content": "')


def read_jsonl(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}:{n}: not JSON ({e})")
    return out


class Chunked:
    """Incremental HTTP/1.1 chunked-body decoder."""

    def __init__(self):
        self.buf = b""
        self.state, self.left = "size", 0  # size line, chunk data, the CRLF after it
        self.done = False

    def feed(self, data):
        self.buf += data
        out = []
        while not self.done:
            if self.state == "size":
                nl = self.buf.find(b"\r\n")
                if nl < 0:
                    break
                self.left = int(self.buf[:nl].split(b";")[0], 16)
                self.buf = self.buf[nl + 2:]
                self.state = "data" if self.left else "end"
                self.done = self.left == 0
            elif self.state == "data":
                if not self.buf:
                    break
                take = self.buf[:self.left]
                out.append(take)
                self.buf = self.buf[len(take):]
                self.left -= len(take)
                if self.left == 0:
                    self.state = "crlf"
            else:  # crlf
                if len(self.buf) < 2:
                    break
                self.buf = self.buf[2:]
                self.state = "size"
        return b"".join(out)


def has_text(event: bytes) -> bool:
    """Whether one SSE data line carries content or reasoning text (a non-empty string)."""
    for key in CONTENT_KEYS:
        at = event.find(key)
        if at >= 0 and event[at + len(key):at + len(key) + 1] not in (b'"', b""):
            return True
    return False


CHOICE_KEYS = (b'"choices":[{', b'"choices": [{')


def is_token_event(event: bytes) -> bool:
    """Whether one SSE data line is a token of the answer: a chat chunk with a
    choice, or an event of /completion's stream (no "choices", a "content")."""
    if not event.startswith(b"{") or event.startswith(b'{"error"'):
        return False
    if any(key in event for key in CHOICE_KEYS):
        return True
    return b'"choices"' not in event and b'"content"' in event


def final_timings(events):
    """prompt_n, prompt_ms of the last chunk that had llama-server's timings."""
    for ev in reversed(events):
        try:
            j = json.loads(ev)
        except json.JSONDecodeError:
            continue
        t = j.get("timings") if isinstance(j, dict) else None
        if isinstance(t, dict):
            return t.get("prompt_n"), t.get("prompt_ms")
    return None, None


def post_plain(host, port, req, timeout_s):
    """One request whose whole reply is read and dropped (the raw route's /apply-template)."""
    body = req["body"].encode("utf-8")
    head = (f"POST {req['path']} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.sendall(head + body)
            while sock.recv(65536):
                pass
    except OSError:
        pass


def send_chain(host, port, chain, timeout_s):
    """One seq's lines in order; the result of its timed one (the last without "timed" marks)."""
    timed = [i for i, r in enumerate(chain) if r.get("timed", False)]
    at = timed[-1] if timed else len(chain) - 1
    out = None
    for i, r in enumerate(chain):
        if r.get("streamed", True):
            got = stream_one(host, port, r, timeout_s)
            out = got if i == at else out
        else:
            post_plain(host, port, r, timeout_s)
    return out


def take_event(out, ev, events, at_s):
    """One SSE data line of a replayed reply, `at_s` after the request was sent."""
    if out["ttft_s"] is None and is_token_event(ev):
        out["ttft_s"] = at_s
    if out["text_s"] is None and has_text(ev):
        out["text_s"] = at_s
    if ev == b"[DONE]":
        out["done_s"] = at_s
    elif ev.startswith(b"{"):
        events.append(ev)
        if out["done_s"] is None and (b'"stop":true' in ev or b'"stop": true' in ev):
            out["done_s"] = at_s  # /completion's last event
        if b'"error"' in ev[:20] and out["error"] is None:
            out["error"] = ev.decode("utf-8", "replace")[:300]


def stream_one(host, port, req, timeout_s):
    """One request on a fresh connection (opened before the clock starts)."""
    body = req["body"].encode("utf-8")
    head = (f"POST {req['path']} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Accept: text/event-stream\r\nContent-Length: {len(body)}\r\nConnection: keep-alive\r\n\r\n").encode()
    out = {"seq": req["seq"], "step": req["step"], "attempt": req.get("attempt"), "round": req.get("round"),
           "concurrency": req.get("concurrency", 1), "ttft_s": None, "text_s": None, "first_byte_s": None,
           "done_s": None,
           "http_status": None, "error": None, "prompt_n": None, "prompt_ms": None}
    sock = socket.create_connection((host, port), timeout=timeout_s)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    clock = time.perf_counter_ns
    try:
        t0 = clock()
        sock.sendall(head + body)
        split, reply_head, pending, events, ended = HttpSplitter(), b"", b"", [], False
        while not ended:  # the reply's end by its framing (chunked or Content-Length), else the close
            data = sock.recv(65536)
            now = clock()
            if not data:
                break
            if out["first_byte_s"] is None:
                out["first_byte_s"] = (now - t0) / 1e9
            for kind, value in split.feed(data):
                if kind == "head":
                    reply_head = value
                    out["http_status"] = int(value.split()[1])
                elif kind == "body":
                    pending += value
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        line = line.rstrip(b"\r")
                        if line.startswith(b"data:"):
                            take_event(out, line[5:].lstrip(), events, (now - t0) / 1e9)
                else:
                    ended = True
        if out["http_status"] != 200 and out["error"] is None:
            out["error"] = (pending or reply_head).decode("utf-8", "replace")[:300]
        out["prompt_n"], out["prompt_ms"] = final_timings(events)
    except OSError as e:
        out["error"] = f"{type(e).__name__}: {e}"
    finally:
        sock.close()
    return out


def replay(args):
    if args.host not in LOOPBACK:
        raise SystemExit(f"{args.host}: loopback only")
    lines = sorted(read_jsonl(args.requests), key=lambda r: r["seq"])  # stable: a seq's lines keep their order
    if not any(r.get("role") == "measured" for r in lines):
        raise SystemExit(f"{args.requests}: no measured requests to replay")
    chains = []  # one per seq: what evalrun sent for that request, in order
    for r in lines:
        if chains and chains[-1][0]["seq"] == r["seq"]:
            chains[-1].append(r)
        else:
            chains.append([r])
    # Every request in evalrun's order, warm-ups and cold row included, so that
    # the server meets each measured one in the state it was in for evalrun
    # (its slots hold what the requests before left there); only the measured
    # ones are kept.
    groups, key_of = [], lambda r: (r["step"], r.get("attempt"), r.get("round"), r.get("concurrency", 1))
    for c in chains:
        if groups and c[0].get("concurrency", 1) > 1 and key_of(groups[-1][0][0]) == key_of(c[0]):
            groups[-1].append(c)
        else:
            groups.append([c])
    results = []
    for g in groups:
        if len(g) == 1:
            one = send_chain(args.host, args.port, g[0], args.timeout)
            if g[0][0].get("role") == "measured":
                results.append(one)
            continue
        got, gate = [None] * len(g), threading.Barrier(len(g))

        def run(i):
            gate.wait()
            got[i] = send_chain(args.host, args.port, g[i], args.timeout)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(g))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        results.extend(x for x, c in zip(got, g) if c[0].get("role") == "measured")
    with open(args.out, "w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    failed = sum(1 for r in results if r["ttft_s"] is None)
    print(f"replayed {len(results)} requests ({len(groups)} groups) to {args.host}:{args.port}; "
          f"{failed} without a first token; wrote {args.out}")
    return 0


# ---- tap: a loopback proxy that times evalrun's own requests as a bare client would see them ----

class TapLog:
    def __init__(self, path):
        self.f = open(path, "a", encoding="utf-8")
        self.mu = threading.Lock()

    def write(self, rec):
        with self.mu:
            self.f.write(json.dumps(rec) + "\n")
            self.f.flush()


class HttpSplitter:
    """Splits one direction of an HTTP/1.1 connection into messages as bytes pass:
    head (up to the blank line), then a Content-Length or chunked body.
    feed(data) returns a list of (kind, value): ("head", bytes), ("body", bytes of
    payload, de-chunked), ("end", None)."""

    def __init__(self):
        self.buf, self.head, self.left, self.dechunk, self.trailer = b"", None, 0, None, False

    def feed(self, data):
        out, self.buf = [], self.buf + data
        while self.buf:
            if self.trailer:  # the CRLF after a chunked body's last (empty) chunk
                if len(self.buf) < 2:
                    break
                self.buf, self.trailer = self.buf[2:], False
                continue
            if self.head is None:
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    break
                self.head, self.buf = self.buf[:end], self.buf[end + 4:]
                out.append(("head", self.head))
                low = self.head.lower()
                if b"transfer-encoding: chunked" in low:
                    self.dechunk = Chunked()
                else:
                    self.dechunk = None
                    self.left = 0
                    for line in low.split(b"\r\n"):
                        if line.startswith(b"content-length:"):
                            self.left = int(line.split(b":", 1)[1])
                    if self.left == 0:
                        out.append(("end", None))
                        self.head = None
                continue
            if self.dechunk is not None:
                before = len(self.buf)
                payload = self.dechunk.feed(self.buf)
                self.buf = self.dechunk.buf  # what the decoder has not consumed (the next message's bytes)
                self.dechunk.buf = b""
                if payload:
                    out.append(("body", payload))
                if self.dechunk.done:
                    out.append(("end", None))
                    self.head, self.trailer = None, True
                elif len(self.buf) == before and not payload:
                    break
                continue
            take, self.buf = self.buf[:self.left], self.buf[self.left:]
            self.left -= len(take)
            out.append(("body", take))
            if self.left == 0:
                out.append(("end", None))
                self.head = None
        return out


def tap_connection(client, upstream_addr, log, clock):
    upstream = socket.create_connection(upstream_addr)
    for s in (client, upstream):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pending, mu = [], threading.Lock()  # requests sent and not yet answered, in order

    def requests_in():
        split, path, body = HttpSplitter(), "", b""
        try:
            while True:
                data = client.recv(65536)
                now = clock()
                if not data:
                    break
                upstream.sendall(data)
                for kind, value in split.feed(data):
                    if kind == "head":
                        path, body = value.split(b" ", 2)[1].decode("latin-1"), b""
                    elif kind == "body":
                        body += value
                    else:  # the request's last byte has arrived: a client's write would have returned
                        with mu:
                            pending.append({"t0": now, "path": path, "sha256": hashlib.sha256(body).hexdigest()})
        except OSError:
            pass
        finally:
            try:
                upstream.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def replies_out():
        split, cur, lines = HttpSplitter(), None, b""
        try:
            while True:
                data = upstream.recv(65536)
                now = clock()
                if not data:
                    break
                client.sendall(data)  # forwarded first: the stamp is when the bytes arrived, parsing comes after
                for kind, value in split.feed(data):
                    if kind == "head":
                        with mu:
                            req = pending.pop(0) if pending else {"t0": now, "path": "?", "sha256": ""}
                        cur = {"path": req["path"], "sha256": req["sha256"], "http_status": int(value.split()[1]),
                               "first_byte_s": (now - req["t0"]) / 1e9, "ttft_s": None, "done_s": None}
                        cur["t0"], lines = req["t0"], b""
                    elif kind == "body" and cur is not None:
                        lines += value
                        *full, lines = lines.split(b"\n")
                        for line in full:
                            line = line.rstrip(b"\r")
                            if cur["ttft_s"] is None and line.startswith(b"data:") and is_token_event(line[5:].lstrip()):
                                cur["ttft_s"] = (now - cur["t0"]) / 1e9
                    elif kind == "end" and cur is not None:
                        cur["done_s"] = (now - cur.pop("t0")) / 1e9
                        log.write(cur)
                        cur = None
        except OSError:
            pass
        finally:
            try:
                client.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    threads = [threading.Thread(target=requests_in, daemon=True), threading.Thread(target=replies_out, daemon=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    client.close()
    upstream.close()


def tap(args):
    if args.host not in LOOPBACK:
        raise SystemExit(f"{args.host}: loopback only")
    log = TapLog(args.out)
    srv = socket.create_server((args.host, args.listen), reuse_port=False)
    srv.listen(256)
    listen = srv.getsockname()[1]  # --listen 0: a free port, printed here
    print(f"tap: {args.host}:{listen} -> {args.host}:{args.port}, log {args.out}", flush=True)
    while True:
        client, _ = srv.accept()
        threading.Thread(target=tap_connection, args=(client, (args.host, args.port), log, time.perf_counter_ns),
                         daemon=True).start()


def tolerance(bare_s):
    return max(0.02 * bare_s, 0.020)


def pair_rows(samples, bare):
    """Replay pairs: (label, step, concurrency, evalrun_s, bare_s, server_prompt_ms); unpaired listed apart."""
    by_seq = {b["seq"]: b for b in bare}
    rows, missing, rounds = [], [], {}
    for s in samples:
        if s.get("role") != "measured" or s.get("seq") not in by_seq:
            continue
        b = by_seq[s["seq"]]
        ev = (s.get("rates") or {}).get("ttft_s")
        pm = (s.get("timings") or {}).get("prompt_ms") if isinstance(s.get("timings"), dict) else None
        if s.get("concurrency", 1) > 1:
            rounds.setdefault((s["step"], s.get("attempt"), s.get("round")), []).append((ev, b["ttft_s"], pm))
            continue
        if ev is None or b["ttft_s"] is None:
            missing.append({"seq": s["seq"], "step": s["step"], "evalrun_ttft_s": ev, "bare_ttft_s": b["ttft_s"]})
            continue
        rows.append((f"#{s['seq']}", s["step"], 1, ev, b["ttft_s"], pm))
    for (step, attempt, rnd), pairs in sorted(rounds.items(), key=lambda kv: str(kv[0])):
        evs = sorted(p[0] for p in pairs if p[0] is not None)
        bs = sorted(p[1] for p in pairs if p[1] is not None)
        if len(evs) != len(pairs) or len(bs) != len(pairs):
            missing.append({"step": step, "round": rnd, "evalrun_timed": len(evs), "bare_timed": len(bs),
                            "requests": len(pairs)})
        for k, (e, b) in enumerate(zip(evs, bs), 1):
            rows.append((f"r{rnd} rank {k}", step, len(pairs), e, b, None))
    return rows, missing


def tap_rows(samples, requests, taps):
    """Tap pairs, request by request: evalrun's TTFT against the tap's for the very
    same request (joined by the sha256 of the timed body), as replay rows."""
    body_sha = {}
    for r in requests:
        if r.get("timed", True):  # files without "timed": the last line of a seq wins
            body_sha[r["seq"]] = hashlib.sha256(r["body"].encode("utf-8")).hexdigest()
    by_sha = {t["sha256"]: t for t in taps if t.get("sha256")}
    rows, missing = [], []
    for s in samples:
        if s.get("role") != "measured":
            continue
        t = by_sha.get(body_sha.get(s.get("seq")))
        ev = (s.get("rates") or {}).get("ttft_s")
        pm = (s.get("timings") or {}).get("prompt_ms") if isinstance(s.get("timings"), dict) else None
        if t is None or ev is None or t.get("ttft_s") is None:
            missing.append({"seq": s.get("seq"), "step": s.get("step"), "source": "tap", "evalrun_ttft_s": ev,
                            "bare_ttft_s": None if t is None else t.get("ttft_s")})
            continue
        rows.append((f"#{s['seq']}", s["step"], s.get("concurrency", 1), ev, t["ttft_s"], pm))
    return rows, missing


def judge(rows, source, judged):
    out = []
    for label, step, c, e, b, pm in rows:
        diff, tol = e - b, tolerance(b)
        out.append({"source": source, "request": label, "step": step, "concurrency": c, "evalrun_ttft_s": e,
                    "bare_ttft_s": b, "diff_s": diff, "allowed_s": tol, "server_prompt_ms": pm,
                    "within": abs(diff) <= tol, "judged": judged(c)})
    return out


def compare(args):
    samples = read_jsonl(args.samples)
    out_rows, missing = [], []
    if args.bare:
        rows, miss = pair_rows(samples, read_jsonl(args.bare))
        # With a tap, a replayed round of C > 1 is shown, not judged: which request waits for which slot,
        # and where a random model's stream is refused, differ between two runs of the same round.
        out_rows += judge(rows, "replay", lambda c: c == 1 or not args.tap)
        missing += [dict(m, source="replay") for m in miss]
    if args.tap:
        if not args.requests:
            raise SystemExit("--tap needs --requests (speed/requests.jsonl) to join the tap's records")
        rows, miss = tap_rows(samples, read_jsonl(args.requests), read_jsonl(args.tap))
        out_rows += judge(rows, "tap", lambda c: True)
        missing += miss
    if not out_rows and not missing:
        raise SystemExit("nothing to compare: give --bare and/or --tap")
    print(f"{'source':<6} {'request':<14} {'step':<16} {'C':>2} {'evalrun ms':>11} {'bare ms':>10} {'diff ms':>9} "
          f"{'allowed ms':>10} {'server prompt ms':>16}  verdict")
    for r in out_rows:
        pm = r["server_prompt_ms"]
        pms = f"{pm:.1f}" if isinstance(pm, (int, float)) else "-"
        v = ("ok" if r["within"] else "OUT") if r["judged"] else ("(ok)" if r["within"] else "(out)")
        print(f"{r['source']:<6} {r['request']:<14} {r['step']:<16} {r['concurrency']:>2} "
              f"{r['evalrun_ttft_s'] * 1e3:>11.1f} {r['bare_ttft_s'] * 1e3:>10.1f} {r['diff_s'] * 1e3:>+9.1f} "
              f"{r['allowed_s'] * 1e3:>10.1f} {pms:>16}  {v}")
    judged = [r for r in out_rows if r["judged"]]
    bad = sum(1 for r in judged if not r["within"])
    diffs = [r["diff_s"] * 1e3 for r in judged]
    # evalrun without a first token where the bare client had one is a failure of evalrun's timing.
    evalrun_lost = [m for m in missing if m.get("evalrun_ttft_s") is None and m.get("bare_ttft_s") is not None
                    or m.get("evalrun_timed", 0) < m.get("bare_timed", 0)
                    or m.get("source") == "tap"]
    verdict = "PASS" if judged and bad == 0 and not evalrun_lost else "FAIL"
    rule = "|evalrun TTFT - bare TTFT| <= max(2 % of bare, 20 ms)"
    if args.bare:
        rule += ("; replay: C=1 per request" + (", C>1 shown, not judged" if args.tap else
                                                 ", C>1 rank by rank within each round replayed at the same concurrency"))
    if args.tap:
        rule += "; tap: every measured request against the tap's timing of the very same request"
    summary = {"rule": rule, "verdict": verdict, "compared": len(judged), "outside": bad, "shown": len(out_rows),
               "unpaired": missing,
               "diff_ms_median": statistics.median(diffs) if diffs else None,
               "diff_ms_min": min(diffs) if diffs else None, "diff_ms_max": max(diffs) if diffs else None,
               "rows": out_rows}
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    for m in missing:
        print(f"unpaired: {json.dumps(m)}")
    med = f"{summary['diff_ms_median']:+.1f}" if diffs else "-"
    print(f"{verdict}: {len(judged) - bad} of {len(judged)} judged TTFT pairs within max(2 %, 20 ms) "
          f"(evalrun - bare: median {med} ms); {len(out_rows) - len(judged)} shown only; {len(missing)} unpaired; "
          f"summary {args.out}")
    return 0 if verdict == "PASS" else 1


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("replay", help="send speed/requests.jsonl again, timed by a bare client")
    r.add_argument("--requests", required=True)
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--host", default="127.0.0.1")
    r.add_argument("--out", required=True)
    r.add_argument("--timeout", type=float, default=600.0)
    c = sub.add_parser("compare", help="evalrun's TTFT against the replay's and/or the tap's")
    c.add_argument("--samples", required=True, help="<job>/speed/samples.jsonl")
    c.add_argument("--bare", help="the replay's output")
    c.add_argument("--tap", help="the tap's log")
    c.add_argument("--requests", help="<job>/speed/requests.jsonl (with --tap)")
    c.add_argument("--out", required=True, help="the JSON summary")
    t = sub.add_parser("tap", help="a loopback proxy that times the requests passing through it")
    t.add_argument("--listen", type=int, required=True, help="the port evalrun's card points at (0: a free one)")
    t.add_argument("--port", type=int, required=True, help="the server's port")
    t.add_argument("--host", default="127.0.0.1")
    t.add_argument("--out", required=True, help="one JSON line per request answered")
    args = p.parse_args(argv)
    return {"replay": replay, "compare": compare, "tap": tap}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
