#include "evals/base/ascii_case.h"
#include "evals/watch/gpu_reader.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace evalrun {
namespace {

constexpr size_t kMaxCapture = 1 << 20;  // nvidia-smi prints a few hundred bytes

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string FirstLine(std::string_view s) {
  s = Trim(s);
  while (!s.empty() && s.front() == '\n') s = Trim(s.substr(1));
  size_t nl = s.find('\n');
  std::string_view line = Trim(s.substr(0, nl));
  if (line.size() > 200) line = line.substr(0, 200);
  return std::string(line);
}

// Calls fn(line_number, line) for each non-blank line (trimmed).
template <typename Fn>
Status ForEachLine(std::string_view text, Fn fn) {
  size_t pos = 0;
  int number = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++number;
    if (line.empty()) continue;
    EVALRUN_RETURN_IF_ERROR(fn(number, line));
  }
  return Status::Ok();
}

void SplitCsv(std::string_view line, std::vector<std::string_view>* fields) {
  fields->clear();
  size_t pos = 0;
  for (;;) {
    size_t comma = line.find(',', pos);
    fields->push_back(Trim(line.substr(pos, comma - pos)));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
}

bool ParseInt(std::string_view s, int* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

// "1542", "1542 MiB", "0 %" -> number; "[N/A]", "[Not Supported]", "N/A" and
// any other bracketed note -> empty. False when it is neither.
bool ParseQuantity(std::string_view s, std::optional<double>* v) {
  v->reset();
  if (s.empty() || s.front() == '[' || s == "N/A") return true;
  size_t space = s.find(' ');
  std::string_view number = s.substr(0, space);
  double d = 0;
  auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), d);
  if (ec != std::errc() || p != number.data() + number.size()) return false;
  if (space != std::string_view::npos) {
    std::string_view unit = Trim(s.substr(space));
    if (unit != "MiB" && unit != "%" && unit != "W" && unit != "MHz") return false;
  }
  *v = d;
  return true;
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsNoCase(s.substr(0, prefix.size()), prefix);
}

std::string LineError(const char* what, int line, const std::string& msg, std::string_view text) {
  return std::string(what) + " line " + std::to_string(line) + ": " + msg + ", got '" +
         std::string(text.substr(0, 160)) + "'";
}

}  // namespace

// ---- RealCommandRunner ----------------------------------------------------

Status RealCommandRunner::Run(const std::vector<std::string>& argv, std::string* stdout_text,
                              double timeout_s) {
  stdout_text->clear();
  if (argv.empty()) return Status::Internal("RealCommandRunner::Run: empty argv");
  const std::string& prog = argv[0];
  ProcessSpec spec;
  spec.argv = argv;
  spec.stdout_cap = kMaxCapture;
  spec.stderr_cap = kMaxCapture;
  spec.limits.wall_s = std::max(1e-3, timeout_s);
  ProcessResult result;
  EVALRUN_RETURN_IF_ERROR(runner_->Run(spec, &result));
  *stdout_text = std::move(result.stdout_text);
  if (result.timed_out) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", timeout_s);
    return Status::Timeout(prog + ": no answer within " + secs + " s (killed)");
  }
  if (result.ok()) return Status::Ok();
  std::string said = FirstLine(result.stderr_text);
  if (said.empty()) said = FirstLine(*stdout_text);
  return Status::Unavailable(prog + ": " + result.exit.Describe() + (said.empty() ? "" : ": " + said));
}

// ---- Parsers --------------------------------------------------------------

Status GpuSelector::Parse(std::string_view text, GpuSelector* selector) {
  *selector = GpuSelector();
  text = Trim(text);
  if (text.empty() || text == "none") return Status::Ok();
  int index = 0;
  if (ParseInt(text, &index) && index >= 0) {
    selector->kind = Kind::kIndex;
    selector->index = index;
    return Status::Ok();
  }
  if (StartsWithNoCase(text, "GPU-") || StartsWithNoCase(text, "MIG-")) {
    selector->kind = Kind::kUuid;
    selector->uuid = std::string(text);
    return Status::Ok();
  }
  return Status::InvalidInput("GPU selector '" + std::string(text) +
                              "': expected an nvidia-smi index (0, 1, ...), a UUID "
                              "(GPU-... or MIG-..., see nvidia-smi -L) or 'none'");
}

std::string GpuSelector::ToString() const {
  switch (kind) {
    case Kind::kNone:
      return "none";
    case Kind::kIndex:
      return "index " + std::to_string(index);
    case Kind::kUuid:
      return uuid;
  }
  return "?";
}

Status ParseGpuQueryCsv(std::string_view text, std::vector<GpuInfo>* gpus) {
  gpus->clear();
  std::vector<std::string_view> f;
  static constexpr const char* kWhat = "nvidia-smi --query-gpu";
  return ForEachLine(text, [&](int number, std::string_view line) -> Status {
    SplitCsv(line, &f);
    if (f[0] == "index") return Status::Ok();  // the header of --format=csv
    if (f.size() < 7) {
      return Status::InvalidInput(
          LineError(kWhat, number,
                    "expected 7 fields (index, uuid, name, pci.bus_id, memory.used, memory.total, "
                    "utilization.gpu)",
                    line));
    }
    GpuInfo g;
    size_t n = f.size();
    if (!ParseInt(f[0], &g.index) || g.index < 0) {
      return Status::InvalidInput(
          LineError(kWhat, number, "field 1 (index): expected a number", line));
    }
    g.uuid = std::string(f[1]);
    // A name with a comma in it would split in two: the last four fields are
    // fixed, so whatever lies between uuid and bus id is the name.
    for (size_t i = 2; i + 4 < n; ++i) {
      if (i > 2) g.name += ", ";
      g.name += f[i];
    }
    g.bus_id = std::string(f[n - 4]);
    if (!ParseQuantity(f[n - 3], &g.mem_used_mib)) {
      return Status::InvalidInput(
          LineError(kWhat, number, "memory.used: expected MiB or [N/A]", line));
    }
    if (!ParseQuantity(f[n - 2], &g.mem_total_mib)) {
      return Status::InvalidInput(
          LineError(kWhat, number, "memory.total: expected MiB or [N/A]", line));
    }
    if (!ParseQuantity(f[n - 1], &g.util_pct)) {
      return Status::InvalidInput(
          LineError(kWhat, number, "utilization.gpu: expected % or [N/A]", line));
    }
    if (g.uuid.empty()) return Status::InvalidInput(LineError(kWhat, number, "empty uuid", line));
    gpus->push_back(std::move(g));
    return Status::Ok();
  });
}

Status ParseComputeAppsCsv(std::string_view text, std::vector<GpuApp>* apps) {
  apps->clear();
  std::vector<std::string_view> f;
  static constexpr const char* kWhat = "nvidia-smi --query-compute-apps";
  return ForEachLine(text, [&](int number, std::string_view line) -> Status {
    if (line.substr(0, 10) == "No running") return Status::Ok();  // older drivers' "none"
    SplitCsv(line, &f);
    if (f[0] == "pid") return Status::Ok();  // header
    if (f.size() != 3) {
      return Status::InvalidInput(
          LineError(kWhat, number, "expected 3 fields (pid, gpu_uuid, used_memory)", line));
    }
    GpuApp a;
    if (!ParseInt(f[0], &a.pid)) {
      return Status::InvalidInput(
          LineError(kWhat, number, "field 1 (pid): expected a number", line));
    }
    a.gpu_uuid = std::string(f[1]);
    if (!ParseQuantity(f[2], &a.used_mib)) {
      return Status::InvalidInput(
          LineError(kWhat, number, "used_memory: expected MiB or [N/A]", line));
    }
    apps->push_back(std::move(a));
    return Status::Ok();
  });
}

Status ParseGpuListing(std::string_view text, std::vector<GpuDevice>* devices) {
  devices->clear();
  static constexpr const char* kWhat = "nvidia-smi -L";
  auto uuid_of = [](std::string_view line) -> std::string_view {
    size_t at = line.find("(UUID: ");
    if (at == std::string_view::npos) return {};
    std::string_view rest = line.substr(at + 7);
    size_t close = rest.find(')');
    if (close == std::string_view::npos) return {};
    return Trim(rest.substr(0, close));
  };
  return ForEachLine(text, [&](int number, std::string_view line) -> Status {
    if (line.substr(0, 4) == "GPU ") {
      // "GPU 0: NVIDIA H200 (UUID: GPU-44031c57-...)"
      size_t colon = line.find(':');
      GpuDevice d;
      if (colon == std::string_view::npos || !ParseInt(line.substr(4, colon - 4), &d.index)) {
        return Status::InvalidInput(
            LineError(kWhat, number, "expected 'GPU <index>: <name> (UUID: ...)'", line));
      }
      std::string_view uuid = uuid_of(line);
      size_t paren = line.rfind(" (UUID: ");
      if (uuid.empty() || paren == std::string_view::npos || paren < colon) {
        return Status::InvalidInput(LineError(kWhat, number, "expected '(UUID: GPU-...)'", line));
      }
      d.name = std::string(Trim(line.substr(colon + 1, paren - colon - 1)));
      d.uuid = std::string(uuid);
      devices->push_back(std::move(d));
      return Status::Ok();
    }
    if (line.substr(0, 4) == "MIG ") {
      // "MIG 1g.18gb     Device  0: (UUID: MIG-...)"
      if (devices->empty()) {
        return Status::InvalidInput(
            LineError(kWhat, number, "a MIG line before any GPU line", line));
      }
      GpuDevice::Mig m;
      std::string_view rest = Trim(line.substr(4));
      size_t sp = rest.find(' ');
      m.profile = std::string(rest.substr(0, sp));
      size_t dev = rest.find("Device");
      size_t colon = rest.find(':', dev == std::string_view::npos ? 0 : dev);
      if (dev == std::string_view::npos || colon == std::string_view::npos ||
          !ParseInt(Trim(rest.substr(dev + 6, colon - dev - 6)), &m.device_index)) {
        return Status::InvalidInput(
            LineError(kWhat, number, "expected 'MIG <profile> Device <n>: (UUID: MIG-...)'", line));
      }
      m.uuid = std::string(uuid_of(line));
      if (m.uuid.empty()) {
        return Status::InvalidInput(LineError(kWhat, number, "expected '(UUID: MIG-...)'", line));
      }
      devices->back().migs.push_back(std::move(m));
      return Status::Ok();
    }
    return Status::InvalidInput(
        LineError(kWhat, number, "expected a 'GPU ...' or 'MIG ...' line", line));
  });
}

Status SelectGpu(const std::vector<GpuInfo>& gpus, const GpuSelector& selector, GpuInfo* gpu) {
  for (const GpuInfo& g : gpus) {
    bool match = selector.kind == GpuSelector::Kind::kIndex  ? g.index == selector.index
                 : selector.kind == GpuSelector::Kind::kUuid ? EqualsNoCase(g.uuid, selector.uuid)
                                                             : false;
    if (match) {
      *gpu = g;
      return Status::Ok();
    }
  }
  std::string there = "nvidia-smi lists " + std::to_string(gpus.size()) + " GPU(s)";
  for (size_t i = 0; i < gpus.size(); ++i) {
    const GpuInfo& g = gpus[i];
    there += (i == 0 ? ": " : "; ") + std::to_string(g.index) + " " + g.uuid + " (" + g.name +
             ", " + g.bus_id + ")";
  }
  return Status::NotFound("GPU " + selector.ToString() + " is not on this machine: " + there);
}

EnginePlacement PlaceEngine(const std::vector<GpuApp>& apps, const std::vector<int>& engine_pids,
                            const GpuInfo& selected) {
  EnginePlacement p;
  for (const GpuApp& a : apps) {
    if (std::find(engine_pids.begin(), engine_pids.end(), a.pid) == engine_pids.end()) continue;
    p.pids_seen.push_back(a.pid);
    bool here = EqualsNoCase(a.gpu_uuid, selected.uuid) ||
                (!selected.mig_uuid.empty() && EqualsNoCase(a.gpu_uuid, selected.mig_uuid));
    if (here) {
      p.on_selected = true;
    } else {
      p.other_uuids.push_back(a.gpu_uuid);
    }
  }
  std::sort(p.pids_seen.begin(), p.pids_seen.end());
  p.pids_seen.erase(std::unique(p.pids_seen.begin(), p.pids_seen.end()), p.pids_seen.end());
  std::sort(p.other_uuids.begin(), p.other_uuids.end());
  p.other_uuids.erase(std::unique(p.other_uuids.begin(), p.other_uuids.end()), p.other_uuids.end());
  return p;
}

// ---- GpuReader ------------------------------------------------------------

GpuReader::GpuReader(CommandRunner* runner, GpuReaderOptions options)
    : runner_(runner), options_(std::move(options)) {}

Status GpuReader::RunSmi(const std::vector<std::string>& args, std::string* out) {
  std::vector<std::string> argv;
  argv.reserve(args.size() + 1);
  argv.push_back(options_.nvidia_smi);
  argv.insert(argv.end(), args.begin(), args.end());
  return runner_->Run(argv, out, options_.timeout_s);
}

Status GpuReader::QueryGpus(std::vector<GpuInfo>* gpus) {
  std::string out;
  EVALRUN_RETURN_IF_ERROR(
      RunSmi({"--query-gpu=index,uuid,name,pci.bus_id,memory.used,memory.total,utilization.gpu",
              "--format=csv,noheader,nounits"},
             &out));
  return ParseGpuQueryCsv(out, gpus);
}

Status GpuReader::QueryComputeApps(std::vector<GpuApp>* apps) {
  std::string out;
  EVALRUN_RETURN_IF_ERROR(RunSmi(
      {"--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv,noheader,nounits"}, &out));
  return ParseComputeAppsCsv(out, apps);
}

Status GpuReader::ListDevices(std::vector<GpuDevice>* devices) {
  std::string out;
  EVALRUN_RETURN_IF_ERROR(RunSmi({"-L"}, &out));
  return ParseGpuListing(out, devices);
}

Status GpuReader::Read(const GpuSelector& selector, GpuInfo* gpu, std::vector<GpuInfo>* all) {
  if (selector.kind == GpuSelector::Kind::kNone) {
    return Status::InvalidInput("GpuReader::Read: no GPU selected");
  }
  std::vector<GpuInfo> local;
  std::vector<GpuInfo>* gpus = all != nullptr ? all : &local;
  EVALRUN_RETURN_IF_ERROR(QueryGpus(gpus));
  if (selector.kind == GpuSelector::Kind::kUuid && StartsWithNoCase(selector.uuid, "MIG-")) {
    if (!EqualsNoCase(mig_uuid_cached_, selector.uuid)) {
      std::vector<GpuDevice> devices;
      EVALRUN_RETURN_IF_ERROR(ListDevices(&devices));
      std::string parent;
      for (const GpuDevice& d : devices) {
        for (const GpuDevice::Mig& m : d.migs) {
          if (EqualsNoCase(m.uuid, selector.uuid)) parent = d.uuid;
        }
      }
      if (parent.empty()) {
        return Status::NotFound("MIG instance " + selector.uuid +
                                " is not on this machine (nvidia-smi -L lists none such)");
      }
      mig_uuid_cached_ = selector.uuid;
      mig_parent_uuid_ = parent;
    }
    GpuSelector parent_sel;
    parent_sel.kind = GpuSelector::Kind::kUuid;
    parent_sel.uuid = mig_parent_uuid_;
    EVALRUN_RETURN_IF_ERROR(SelectGpu(*gpus, parent_sel, gpu));
    gpu->mig_uuid = selector.uuid;
    return Status::Ok();
  }
  return SelectGpu(*gpus, selector, gpu);
}

}  // namespace evalrun
