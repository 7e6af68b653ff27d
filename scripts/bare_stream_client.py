#!/usr/bin/env python3
"""A bare streaming client for the speed part's requests, and the TTFT comparison.

Python 3.10+, standard library only. Loopback servers only (127.0.0.1 / ::1 / localhost).

  replay:  sends the speed part's requests again, byte for byte, from
           <job>/speed/requests.jsonl (each line {seq, step, role, attempt, round,
           concurrency, path, body}) to the server, and writes one JSON line per
           request: {seq, step, round, concurrency, ttft_s, text_s, first_byte_s,
           done_s, http_status, error, prompt_ms, prompt_n}.
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
           are sent at once from their own threads, released together; the
           others one at a time, in evalrun's order (by seq). Every request of
           the file is sent (warm-ups and the cold row too, so the server meets
           each measured request in the state evalrun found it in); only the
           measured ones are timed into the output.
  compare: joins evalrun's speed/samples.jsonl (rates.ttft_s, by seq) with the
           replay and checks each pair against max(2 %, 20 ms) of the bare
           client's TTFT: requests of concurrency 1 request by request; a round
           of concurrency C > 1 rank by rank (the k-th fastest of evalrun's round
           against the k-th fastest of the replayed round: which request the
           server queues is its choice, so request-by-request pairs are not
           comparable there). Prints a table and a PASS/FAIL line, writes a JSON
           summary. Exit 0 on PASS, 1 on FAIL, 2 on bad input.
"""
from __future__ import annotations

import argparse
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
        raw, headers_done, chunked, dechunk = b"", False, False, Chunked()
        pending, events = b"", []
        while True:
            data = sock.recv(65536)
            now = clock()
            if not data:
                break
            if out["first_byte_s"] is None:
                out["first_byte_s"] = (now - t0) / 1e9
            if not headers_done:
                raw += data
                end = raw.find(b"\r\n\r\n")
                if end < 0:
                    continue
                status_line, _, hdrs = raw[:end].partition(b"\r\n")
                out["http_status"] = int(status_line.split()[1])
                chunked = b"transfer-encoding: chunked" in hdrs.lower()
                data, headers_done = raw[end + 4:], True
            payload = dechunk.feed(data) if chunked else data
            pending += payload
            *lines, pending = pending.split(b"\n")
            for line in lines:
                line = line.rstrip(b"\r")
                if not line.startswith(b"data:"):
                    continue
                ev = line[5:].lstrip()
                if out["ttft_s"] is None and is_token_event(ev):
                    out["ttft_s"] = (now - t0) / 1e9
                if out["text_s"] is None and has_text(ev):
                    out["text_s"] = (now - t0) / 1e9
                if ev == b"[DONE]":
                    out["done_s"] = (now - t0) / 1e9
                elif ev.startswith(b"{"):
                    events.append(ev)
                    if out["done_s"] is None and (b'"stop":true' in ev or b'"stop": true' in ev):
                        out["done_s"] = (now - t0) / 1e9  # /completion's last event
                    if b'"error"' in ev[:20] and out["error"] is None:
                        out["error"] = ev.decode("utf-8", "replace")[:300]
            if chunked and dechunk.done:
                break
        if out["http_status"] != 200 and out["error"] is None:
            out["error"] = (pending or raw).decode("utf-8", "replace")[:300]
        out["prompt_n"], out["prompt_ms"] = final_timings(events)
    except OSError as e:
        out["error"] = f"{type(e).__name__}: {e}"
    finally:
        sock.close()
    return out


def replay(args):
    if args.host not in LOOPBACK:
        raise SystemExit(f"{args.host}: loopback only")
    reqs = sorted(read_jsonl(args.requests), key=lambda r: r["seq"])
    if not any(r.get("role") == "measured" for r in reqs):
        raise SystemExit(f"{args.requests}: no measured requests to replay")
    # Every request in evalrun's order, warm-ups and cold row included, so that
    # the server meets each measured one in the state it was in for evalrun
    # (its slots hold what the requests before left there); only the measured
    # ones are kept.
    groups, key_of = [], lambda r: (r["step"], r.get("attempt"), r.get("round"), r.get("concurrency", 1))
    for r in reqs:
        if groups and r.get("concurrency", 1) > 1 and key_of(groups[-1][0]) == key_of(r):
            groups[-1].append(r)
        else:
            groups.append([r])
    results = []
    for g in groups:
        if len(g) == 1:
            one = stream_one(args.host, args.port, g[0], args.timeout)
            if g[0].get("role") == "measured":
                results.append(one)
            continue
        got, gate = [None] * len(g), threading.Barrier(len(g))

        def run(i):
            gate.wait()
            got[i] = stream_one(args.host, args.port, g[i], args.timeout)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(g))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        results.extend(x for x, r in zip(got, g) if r.get("role") == "measured")
    with open(args.out, "w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    failed = sum(1 for r in results if r["ttft_s"] is None)
    print(f"replayed {len(results)} requests ({len(groups)} groups) to {args.host}:{args.port}; "
          f"{failed} without a first token; wrote {args.out}")
    return 0


def tolerance(bare_s):
    return max(0.02 * bare_s, 0.020)


def pair_rows(samples, bare):
    """(label, step, concurrency, evalrun_s, bare_s, server_prompt_ms) pairs; unpaired listed apart."""
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


def compare(args):
    samples, bare = read_jsonl(args.samples), read_jsonl(args.bare)
    rows, missing = pair_rows(samples, bare)
    print(f"{'request':<14} {'step':<16} {'C':>2} {'evalrun ms':>11} {'bare ms':>10} {'diff ms':>9} "
          f"{'allowed ms':>10} {'server prompt ms':>16}  verdict")
    out_rows, bad = [], 0
    for label, step, c, e, b, pm in rows:
        diff, tol = e - b, tolerance(b)
        ok = abs(diff) <= tol
        bad += 0 if ok else 1
        pms = f"{pm:.1f}" if isinstance(pm, (int, float)) else "-"
        print(f"{label:<14} {step:<16} {c:>2} {e * 1e3:>11.1f} {b * 1e3:>10.1f} {diff * 1e3:>+9.1f} "
              f"{tol * 1e3:>10.1f} {pms:>16}  {'ok' if ok else 'OUT'}")
        out_rows.append({"request": label, "step": step, "concurrency": c, "evalrun_ttft_s": e, "bare_ttft_s": b,
                         "diff_s": diff, "allowed_s": tol, "server_prompt_ms": pm, "within": ok})
    diffs = [r["diff_s"] * 1e3 for r in out_rows]
    # evalrun without a first token where the bare client had one is a failure of evalrun's timing.
    evalrun_lost = [m for m in missing if m.get("evalrun_ttft_s") is None and m.get("bare_ttft_s") is not None
                    or m.get("evalrun_timed", 0) < m.get("bare_timed", 0)]
    verdict = "PASS" if out_rows and bad == 0 and not evalrun_lost else "FAIL"
    summary = {"rule": "|evalrun TTFT - bare TTFT| <= max(2 % of bare, 20 ms); C=1 per request, C>1 rank by rank "
                       "within each round replayed at the same concurrency",
               "verdict": verdict, "compared": len(out_rows), "outside": bad, "unpaired": missing,
               "diff_ms_median": statistics.median(diffs) if diffs else None,
               "diff_ms_min": min(diffs) if diffs else None, "diff_ms_max": max(diffs) if diffs else None,
               "rows": out_rows}
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    for m in missing:
        print(f"unpaired: {json.dumps(m)}")
    med = f"{summary['diff_ms_median']:+.1f}" if diffs else "-"
    print(f"{verdict}: {len(out_rows) - bad} of {len(out_rows)} TTFT pairs within max(2 %, 20 ms) "
          f"(evalrun - bare: median {med} ms); {len(missing)} unpaired; summary {args.out}")
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
    c = sub.add_parser("compare", help="evalrun's TTFT against the replay's")
    c.add_argument("--samples", required=True, help="<job>/speed/samples.jsonl")
    c.add_argument("--bare", required=True, help="the replay's output")
    c.add_argument("--out", required=True, help="the JSON summary")
    args = p.parse_args(argv)
    return replay(args) if args.cmd == "replay" else compare(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
