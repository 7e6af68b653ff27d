// The client section: evalrun against a real llama-server next to a plain
// Python client sending the same requests.
//
// llama-server (EVALRUN_LLAMA_SERVER) serves stories260K-ctx128k.gguf with 4 slots,
// -t 1, chatml. First the request bodies are recorded: the real evalrun
// binary runs --requests MMLU-Pro letter prompts (max_tokens 8) against the
// in-process fake server, which keeps every body as sent. Then, two rounds
// each, best of two: the real evalrun binary runs the same card against
// llama-server, and two Python thread pools of 4 (one kept-alive connection
// per thread, the bodies as evalrun sent them) ask them too.
// Whole-process CPU per request (wait4 rusage / requests) and wall time are
// compared. Targets: evalrun's CPU per request <= 0.3x the Python client's;
// its wall time within 2 % of it (the server is the bottleneck for both).
// Two Python clients: requests.Session (what the issue measured: its 2.10 and
// 2.57 ms per request are what requests 2.34 costs here, 2.2 ms; Debian's
// requests 2.28 costs 1.6 ms; the targets are judged against it, the
// interpreter and versions printed) and bare http.client (about 0.7 ms:
// printed beside, so that nobody mistakes the ratio for the leanest one
// possible). The Python is the python3 on PATH (EVALRUN_BENCH_PYTHON).
//
// The card says "kv_cache": "per_slot", as the server is started (-np 4
// without --kv-unified) and as evalrun's message advises: without it
// evalrun assumes one shared cache of one slot's context and admits fewer
// requests at once than the Python client sends (measured: 21 % more wall
// time), which is not what this section compares.
//
// Not in the default sections: it needs a llama-server binary.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include <nlohmann/json.hpp>

#include "bench/bench.h"
#include "tests/real/llama_server.h"
#include "tests/support/fake_server.h"
#include "tests/support/run_binary.h"

namespace evalrun::bench {
namespace {

using evalrun::testing::FakeServer;

// Sends every line of BODIES to URL from a pool of 4 threads, one kept-alive
// connection each; exits 1 when a reply is not 200. MODE "http.client": the
// standard library's bare connection (the leanest Python client); MODE
// "requests": a requests.Session per thread, the usual Python client, and
// the one whose cost users report (2.10 and 2.57 ms per request;
// http.client costs about 0.7 ms here). Exits 3 when requests is missing.
constexpr const char* kPythonClient = R"(import http.client, json, sys, threading, urllib.parse
from concurrent.futures import ThreadPoolExecutor
url, mode = sys.argv[1], sys.argv[3]
bodies = [l.encode() for l in open(sys.argv[2], encoding="utf-8") if l.strip()]
local = threading.local()
if mode == "requests":
    try:
        import requests
    except ImportError:
        raise SystemExit(3)
def send_requests(body):
    s = getattr(local, "s", None)
    if s is None:
        s = local.s = requests.Session()
    r = s.post(url, data=body, headers={"Content-Type": "application/json"}, timeout=600)
    if r.status_code != 200:
        raise SystemExit("HTTP %d: %s" % (r.status_code, r.text[:200]))
    return r.json()["choices"][0]["message"]["content"]
def send_http_client(body):
    c = getattr(local, "c", None)
    if c is None:
        u = urllib.parse.urlparse(url)
        c = local.c = http.client.HTTPConnection(u.hostname, u.port, timeout=600)
    c.request("POST", urllib.parse.urlparse(url).path, body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    if r.status != 200:
        raise SystemExit("HTTP %d: %s" % (r.status, data[:200]))
    return json.loads(data)["choices"][0]["message"]["content"]
with ThreadPoolExecutor(4) as pool:
    answers = list(pool.map(send_requests if mode == "requests" else send_http_client, bodies))
print(len(answers))
)";

std::string Card(const std::string& base_url, int questions) {
  return R"({
  "name": "bench-client",
  "model": {"name": "stories260K"},
  "server": {"base_url": ")" + base_url + R"(", "slots": 4, "kv_cache": "per_slot", "ready_timeout_s": 60},
  "parts": {"mmlupro": {"questions": )" + std::to_string(questions) + R"(, "max_tokens": 8}}
}
)";
}

// The bodies evalrun sends for the card, as the fake server received them.
bool RecordBodies(const BenchOptions& o, int questions, std::string* jsonl) {
  testing::FakeServerOptions fo;
  fo.slots = 4;
  fo.n_ctx = 1 << 20;
  FakeServer fake(fo);
  if (!fake.Start()) return false;
  fake.SetResponder([](const nlohmann::json&) { return testing::FakeReply{"A", "", "stop"}; });
  const std::string card = o.work_dir + "/client-record.json";
  testing::WriteFile(card, Card(fake.base_url(), questions));
  ChildProcess child;
  if (!child.Start({o.evalrun_binary, "--card", card, "--out", o.work_dir + "/runs", "--job", "record",
                    "--data-dir", o.data_dir},
                   o.work_dir, "client-record"))
    return false;
  ChildRun run = child.Wait(600);
  if (run.exit_code != 0) {
    std::fprintf(stderr, "bench: client: recording: exit %d\n%s\n", run.exit_code, FileTail(run.err_path).c_str());
    return false;
  }
  for (const nlohmann::json& b : fake.requests()) *jsonl += b.dump() + "\n";
  return static_cast<int>(fake.requests().size()) == questions;
}

bool Measure(const std::vector<std::string>& argv, const BenchOptions& o, const std::string& tag, ChildRun* out) {
  ChildProcess child;
  if (!child.Start(argv, o.work_dir, tag)) return false;
  *out = child.Wait(1800);
  if (out->exit_code != 0)
    std::fprintf(stderr, "bench: client: %s: exit %d\n%s\n", tag.c_str(), out->exit_code,
                 FileTail(out->err_path).c_str());
  return out->exit_code == 0;
}

// The Python that runs the clients: EVALRUN_BENCH_PYTHON, else the python3
// a user here would run (the first on PATH), resolved to the interpreter
// itself (a pyenv shim is a shell script whose start-up would be counted
// as the client's). "" when none runs. *versions: "3.11.7, requests 2.34.2".
std::string ClientPython(const BenchOptions& o, std::string* versions) {
  std::string py = "/usr/bin/python3";
  if (const char* env = std::getenv("EVALRUN_BENCH_PYTHON"); env && *env) {
    py = env;
  } else if (const char* path = std::getenv("PATH")) {
    std::string_view rest = path;
    while (!rest.empty()) {
      const size_t colon = std::min(rest.find(':'), rest.size());
      const std::string dir(rest.substr(0, colon));
      rest.remove_prefix(std::min(colon + 1, rest.size()));
      if (!dir.empty() && access((dir + "/python3").c_str(), X_OK) == 0) {
        py = dir + "/python3";
        break;
      }
    }
  }
  const std::string probe = o.work_dir + "/client-python.py";
  testing::WriteFile(probe, "import sys\ntry:\n    import requests; r = requests.__version__\nexcept ImportError:\n"
                            "    r = 'missing'\nprint(sys.executable)\nprint(sys.version.split()[0] + ', requests ' + r)\n");
  ChildProcess child;
  if (py.empty() || py[0] != '/' || !child.Start({py, probe}, o.work_dir, "client-python")) return "";
  const ChildRun run = child.Wait(60);
  const std::string out = FileTail(run.out_path);
  const size_t nl = out.find('\n');
  if (run.exit_code != 0 || nl == std::string::npos) return "";
  *versions = out.substr(nl + 1, out.find('\n', nl + 1) - nl - 1);
  return out.substr(0, nl);
}

struct Best {
  double cpu_s = 1e18, wall_s = 1e18;
  void Add(const ChildRun& r) {
    cpu_s = std::min(cpu_s, r.cpu_s());
    wall_s = std::min(wall_s, r.wall_s());
  }
};

// The verdicts are against the requests client (the usual Python client);
// the bare http.client figures are printed beside them.
void AddClientFigures(int n, const Best& e, const Best* req, const Best& lean, std::vector<Figure>* out) {
  const std::string sec = "client";
  const double e_ms = e.cpu_s / n * 1e3, lean_ms = lean.cpu_s / n * 1e3;
  out->push_back({sec, Fmt("evalrun CPU per request (%d MMLU-Pro, 4 slots, best of 2)", n), Fmt("%.3f ms", e_ms), "",
                  Verdict::kInfo});
  if (req != nullptr) {
    const double req_ms = req->cpu_s / n * 1e3, cpu_ratio = e_ms / req_ms, wall_ratio = e.wall_s / req->wall_s;
    out->push_back({sec, "Python requests.Session x4, CPU per request (same bodies)", Fmt("%.3f ms", req_ms), "",
                    Verdict::kInfo});
    out->push_back({sec, "CPU per request, evalrun / Python requests", Fmt("%.2fx", cpu_ratio), "<= 0.30x",
                    cpu_ratio <= 0.30 ? Verdict::kPass : Verdict::kMiss});
    out->push_back({sec, Fmt("wall time, evalrun %.2f s / Python requests %.2f s", e.wall_s, req->wall_s),
                    Fmt("%.3f", wall_ratio), "<= 1.02", wall_ratio <= 1.02 ? Verdict::kPass : Verdict::kMiss});
  } else {
    out->push_back({sec, "Python requests client", "python3 -c 'import requests' fails: not measured", "",
                    Verdict::kMiss});
  }
  out->push_back({sec, "Python http.client x4 (the leanest), CPU per request", Fmt("%.3f ms", lean_ms), "",
                  Verdict::kInfo});
  out->push_back({sec, "CPU per request, evalrun / Python http.client", Fmt("%.2fx", e_ms / lean_ms), "(info)",
                  Verdict::kInfo});
  out->push_back({sec, Fmt("wall time, evalrun %.2f s / Python http.client %.2f s", e.wall_s, lean.wall_s),
                  Fmt("%.3f", e.wall_s / lean.wall_s), "(info)", Verdict::kInfo});
}

}  // namespace

bool RunClientSection(const BenchOptions& o, std::vector<Figure>* out) {
  const std::string sec = "client";
  const int n = o.requests;
  if (testing::LlamaServerBinary().empty()) {
    out->push_back({sec, "evalrun vs a Python client on llama-server", "EVALRUN_LLAMA_SERVER not set", "",
                    Verdict::kMiss});
    return false;
  }
  std::string versions;
  const std::string python = ClientPython(o, &versions);
  if (python.empty()) {
    out->push_back({sec, "Python for the clients", "no python3 runs (set EVALRUN_BENCH_PYTHON)", "", Verdict::kMiss});
    return false;
  }
  out->push_back({sec, "Python for the clients", python + " (" + versions + ")", "", Verdict::kInfo});
  std::string bodies;
  if (!RecordBodies(o, n, &bodies)) return false;
  const std::string bodies_path = o.work_dir + "/client-bodies.jsonl", py = o.work_dir + "/client.py";
  testing::WriteFile(bodies_path, bodies);
  testing::WriteFile(py, kPythonClient);
  testing::LlamaServerArgs args;
  args.model = "stories260K-ctx128k.gguf";  // stories260K with a 128K training context: no prompt is capped
  args.parallel = 4;
  args.ctx = 4 * 8192;
  args.metrics = false;
  testing::LlamaServer server(args);
  std::string err;
  if (!server.Start(o.work_dir + "/llama-server.log", &err)) {
    std::fprintf(stderr, "bench: client: llama-server: %s\n", err.c_str());
    return false;
  }
  const std::string card = o.work_dir + "/client-real.json";
  testing::WriteFile(card, Card(server.base_url(), n));
  // Best of two rounds each, the three clients taking turns.
  Best e, req, lean;
  bool have_requests = true;
  for (int round = 1; round <= 2; ++round) {
    ChildRun run;
    const std::string r = std::to_string(round), url = server.base_url() + "/chat/completions";
    if (!Measure({o.evalrun_binary, "--card", card, "--out", o.work_dir + "/runs", "--job", "real-" + r,
                  "--data-dir", o.data_dir},
                 o, "client-real-" + r, &run))
      return false;
    e.Add(run);
    if (have_requests) {
      if (Measure({python, py, url, bodies_path, "requests"}, o, "client-requests-" + r, &run))
        req.Add(run);
      else if (run.exit_code == 3)
        have_requests = false;  // python3-requests is not installed
      else
        return false;
    }
    if (!Measure({python, py, url, bodies_path, "http.client"}, o, "client-http-" + r, &run)) return false;
    lean.Add(run);
  }
  AddClientFigures(n, e, have_requests ? &req : nullptr, lean, out);
  return true;
}

}  // namespace evalrun::bench
