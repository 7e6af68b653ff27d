#include "evals/watch/gpu_reader.h"
#include "tests/support/test_paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace evalrun {
namespace {

// tests/fixtures/nvidia-smi/capture_*.txt: what nvidia-smi 580.159.04 printed
// on H200 machines (capture.sh there says how). Sections start with
// "=== <name> rc=<exit status> ms=<wall ms>"; a command's empty output reads
// as an empty section.
struct Section {
  int rc = -1;
  std::string text;
};

std::filesystem::path FixturesDir() { return testing::FixturePath("nvidia-smi"); }

std::map<std::string, Section> LoadCapture(const std::string& file) {
  std::filesystem::path path = FixturesDir() / file;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "missing fixture " << path;
  std::map<std::string, Section> out;
  std::string line;
  Section* cur = nullptr;
  while (std::getline(in, line)) {
    if (line.rfind("=== ", 0) == 0) {
      std::istringstream head(line.substr(4));
      std::string name, rc;
      head >> name >> rc;
      cur = &out[name];
      if (rc.rfind("rc=", 0) == 0) cur->rc = std::stoi(rc.substr(3));
      continue;
    }
    if (cur != nullptr) cur->text += line + "\n";
  }
  return out;
}

const char kUuid0[] = "GPU-44031c57-c03e-9498-349b-24940666ea75";
const char kUuid1[] = "GPU-7241817d-e329-fd9d-3d05-9568059f6df6";

TEST(ParseGpuQueryCsvTest, TwoH200sAsCaptured) {
  auto cap = LoadCapture("capture_h200x2.txt");
  ASSERT_EQ(cap["query_gpu_nounits"].rc, 0);
  std::vector<GpuInfo> gpus;
  ASSERT_TRUE(ParseGpuQueryCsv(cap["query_gpu_nounits"].text, &gpus).ok());
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].index, 0);
  EXPECT_EQ(gpus[0].uuid, kUuid0);
  EXPECT_EQ(gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(gpus[0].bus_id, "00000000:00:06.0");
  EXPECT_EQ(gpus[0].mem_used_mib, 0.0);
  EXPECT_EQ(gpus[0].mem_total_mib, 143771.0);
  EXPECT_EQ(gpus[0].util_pct, 0.0);
  EXPECT_EQ(gpus[1].index, 1);
  EXPECT_EQ(gpus[1].uuid, kUuid1);
  EXPECT_EQ(gpus[1].bus_id, "00000000:00:07.0");

  // With a process holding 1 GiB on GPU 1.
  ASSERT_TRUE(ParseGpuQueryCsv(cap["query_gpu_busy_nounits"].text, &gpus).ok());
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].mem_used_mib, 0.0);
  EXPECT_EQ(gpus[1].mem_used_mib, 1551.0);
  EXPECT_EQ(gpus[1].mem_total_mib, 143771.0);
}

TEST(ParseGpuQueryCsvTest, UnitsAndHeaderParseTheSame) {
  auto cap = LoadCapture("capture_h200x2.txt");
  std::vector<GpuInfo> plain, units, header;
  ASSERT_TRUE(ParseGpuQueryCsv(cap["query_gpu_nounits"].text, &plain).ok());
  ASSERT_TRUE(ParseGpuQueryCsv(cap["query_gpu_units"].text, &units).ok());
  ASSERT_TRUE(ParseGpuQueryCsv(cap["query_gpu_header"].text, &header).ok());
  ASSERT_EQ(units.size(), 2u);
  ASSERT_EQ(header.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(units[i].uuid, plain[i].uuid);
    EXPECT_EQ(units[i].mem_total_mib, plain[i].mem_total_mib);
    EXPECT_EQ(units[i].util_pct, plain[i].util_pct);
    EXPECT_EQ(header[i].bus_id, plain[i].bus_id);
    EXPECT_EQ(header[i].mem_total_mib, 143771.0);
  }
}

TEST(ParseGpuQueryCsvTest, OneH200AsCaptured) {
  auto cap = LoadCapture("capture_h200x1.txt");
  std::vector<GpuInfo> gpus;
  ASSERT_TRUE(ParseGpuQueryCsv(cap["query_gpu_busy_nounits"].text, &gpus).ok());
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].uuid, "GPU-b96f149c-0663-6095-be55-1ebca5ac330e");
  EXPECT_EQ(gpus[0].mem_used_mib, 1551.0);
  EXPECT_EQ(gpus[0].util_pct, 2.0);
}

TEST(ParseGpuQueryCsvTest, NotAvailableValuesAreEmpty) {
  // utilization.gpu reads [N/A] on a GPU in MIG mode; some boards don't
  // report memory at all.
  std::vector<GpuInfo> gpus;
  ASSERT_TRUE(
      ParseGpuQueryCsv("0, GPU-a, NVIDIA A100-SXM4-40GB, 00000000:07:00.0, 13, 40960, [N/A]\n"
                       "1, GPU-b, NVIDIA T4, 00000000:08:00.0, [Not Supported], [N/A], 7 %\r\n",
                       &gpus)
          .ok());
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].mem_used_mib, 13.0);
  EXPECT_FALSE(gpus[0].util_pct.has_value());
  EXPECT_FALSE(gpus[1].mem_used_mib.has_value());
  EXPECT_FALSE(gpus[1].mem_total_mib.has_value());
  EXPECT_EQ(gpus[1].util_pct, 7.0);
}

TEST(ParseGpuQueryCsvTest, BadLinesNameTheLineAndField) {
  std::vector<GpuInfo> gpus;
  Status st = ParseGpuQueryCsv("0, GPU-a, H200, 0:6.0, 1, 2, 3\n\n0, GPU-b\n", &gpus);
  EXPECT_EQ(st.code(), Status::Code::kInvalidInput);
  EXPECT_EQ(st.message(),
            "nvidia-smi --query-gpu line 3: expected 7 fields (index, uuid, name, pci.bus_id, "
            "memory.used, memory.total, utilization.gpu), got '0, GPU-b'");
  st = ParseGpuQueryCsv("0, GPU-a, H200, 0:6.0, lots, 2, 3\n", &gpus);
  EXPECT_EQ(st.message(),
            "nvidia-smi --query-gpu line 1: memory.used: expected MiB or [N/A], got '0, GPU-a, "
            "H200, 0:6.0, lots, 2, 3'");
  // What nvidia-smi printed for an unknown field (exit status 2).
  auto cap = LoadCapture("capture_h200x2.txt");
  EXPECT_EQ(cap["bad_field"].rc, 2);
  EXPECT_EQ(ParseGpuQueryCsv(cap["bad_field"].text, &gpus).code(), Status::Code::kInvalidInput);
}

TEST(ParseComputeAppsCsvTest, NoneOneAndUnits) {
  auto cap = LoadCapture("capture_h200x2.txt");
  std::vector<GpuApp> apps{GpuApp{}};
  ASSERT_TRUE(ParseComputeAppsCsv(cap["apps_none_nounits"].text, &apps).ok());
  EXPECT_TRUE(apps.empty());
  ASSERT_TRUE(ParseComputeAppsCsv(cap["apps_one_nounits"].text, &apps).ok());
  ASSERT_EQ(apps.size(), 1u);
  EXPECT_EQ(apps[0].pid, 611);
  EXPECT_EQ(apps[0].gpu_uuid, kUuid1);
  EXPECT_EQ(apps[0].used_mib, 1542.0);
  ASSERT_TRUE(ParseComputeAppsCsv(cap["apps_one_units"].text, &apps).ok());
  ASSERT_EQ(apps.size(), 1u);
  EXPECT_EQ(apps[0].used_mib, 1542.0);
  ASSERT_TRUE(ParseComputeAppsCsv("No running processes found\n", &apps).ok());
  EXPECT_TRUE(apps.empty());
  ASSERT_TRUE(ParseComputeAppsCsv("77, GPU-a, [N/A]\n", &apps).ok());
  ASSERT_EQ(apps.size(), 1u);
  EXPECT_FALSE(apps[0].used_mib.has_value());
  EXPECT_EQ(ParseComputeAppsCsv("x, GPU-a, 1\n", &apps).message(),
            "nvidia-smi --query-compute-apps line 1: field 1 (pid): expected a number, got 'x, "
            "GPU-a, 1'");
}

// A -L listing with MIG instances, in the layout NVIDIA documents (no MIG
// machine was available for a capture).
const char kMigListing[] =
    "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77)\n"
    "  MIG 3g.20gb     Device  0: (UUID: MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f)\n"
    "  MIG 1g.5gb      Device  1: (UUID: MIG-cba663e8-9bed-5b25-b243-5985ef7c9beb)\n"
    "GPU 1: NVIDIA A100-SXM4-40GB (UUID: GPU-9a1b2c3d-0000-1111-2222-333344445555)\n";

TEST(ParseGpuListingTest, CapturedAndMig) {
  auto cap = LoadCapture("capture_h200x2.txt");
  std::vector<GpuDevice> devices;
  ASSERT_TRUE(ParseGpuListing(cap["list"].text, &devices).ok());
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[1].index, 1);
  EXPECT_EQ(devices[1].name, "NVIDIA H200");
  EXPECT_EQ(devices[1].uuid, kUuid1);
  EXPECT_TRUE(devices[1].migs.empty());

  ASSERT_TRUE(ParseGpuListing(kMigListing, &devices).ok());
  ASSERT_EQ(devices.size(), 2u);
  ASSERT_EQ(devices[0].migs.size(), 2u);
  EXPECT_EQ(devices[0].migs[1].profile, "1g.5gb");
  EXPECT_EQ(devices[0].migs[1].device_index, 1);
  EXPECT_EQ(devices[0].migs[1].uuid, "MIG-cba663e8-9bed-5b25-b243-5985ef7c9beb");
  EXPECT_TRUE(devices[1].migs.empty());

  EXPECT_EQ(ParseGpuListing("  MIG 1g.5gb Device 0: (UUID: MIG-x)\n", &devices).message(),
            "nvidia-smi -L line 1: a MIG line before any GPU line, got 'MIG 1g.5gb Device 0: "
            "(UUID: MIG-x)'");
}

TEST(GpuSelectorTest, Parse) {
  GpuSelector s;
  ASSERT_TRUE(GpuSelector::Parse("1", &s).ok());
  EXPECT_EQ(s.kind, GpuSelector::Kind::kIndex);
  EXPECT_EQ(s.index, 1);
  ASSERT_TRUE(GpuSelector::Parse(kUuid0, &s).ok());
  EXPECT_EQ(s.kind, GpuSelector::Kind::kUuid);
  EXPECT_EQ(s.uuid, kUuid0);
  ASSERT_TRUE(GpuSelector::Parse("", &s).ok());
  EXPECT_EQ(s.kind, GpuSelector::Kind::kNone);
  ASSERT_TRUE(GpuSelector::Parse("none", &s).ok());
  EXPECT_EQ(s.kind, GpuSelector::Kind::kNone);
  Status st = GpuSelector::Parse("cuda:0", &s);
  EXPECT_EQ(st.message(),
            "GPU selector 'cuda:0': expected an nvidia-smi index (0, 1, ...), a UUID (GPU-... "
            "or MIG-..., see nvidia-smi -L) or 'none'");
}

TEST(SelectGpuTest, ByIndexAndByUuid) {
  auto cap = LoadCapture("capture_h200x2.txt");
  std::vector<GpuInfo> gpus;
  ASSERT_TRUE(ParseGpuQueryCsv(cap["query_gpu_busy_nounits"].text, &gpus).ok());
  GpuSelector sel;
  GpuInfo g;
  ASSERT_TRUE(GpuSelector::Parse("1", &sel).ok());
  ASSERT_TRUE(SelectGpu(gpus, sel, &g).ok());
  EXPECT_EQ(g.uuid, kUuid1);
  EXPECT_EQ(g.mem_used_mib, 1551.0);
  // UUIDs compare without regard to case.
  ASSERT_TRUE(GpuSelector::Parse("gpu-44031C57-C03E-9498-349B-24940666EA75", &sel).ok());
  ASSERT_TRUE(SelectGpu(gpus, sel, &g).ok());
  EXPECT_EQ(g.index, 0);
  EXPECT_EQ(g.mem_used_mib, 0.0);
  ASSERT_TRUE(GpuSelector::Parse("2", &sel).ok());
  Status st = SelectGpu(gpus, sel, &g);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(),
            "GPU index 2 is not on this machine: nvidia-smi lists 2 GPU(s): 0 "
            "GPU-44031c57-c03e-9498-349b-24940666ea75 (NVIDIA H200, 00000000:00:06.0); 1 "
            "GPU-7241817d-e329-fd9d-3d05-9568059f6df6 (NVIDIA H200, 00000000:00:07.0)");
}

TEST(PlaceEngineTest, SelectedOtherOrNone) {
  auto cap = LoadCapture("capture_h200x2.txt");
  std::vector<GpuInfo> gpus;
  std::vector<GpuApp> apps;
  ASSERT_TRUE(ParseGpuQueryCsv(cap["query_gpu_busy_nounits"].text, &gpus).ok());
  ASSERT_TRUE(ParseComputeAppsCsv(cap["apps_one_nounits"].text, &apps).ok());
  EnginePlacement p = PlaceEngine(apps, {611, 612}, gpus[0]);
  EXPECT_FALSE(p.on_selected);
  EXPECT_EQ(p.other_uuids, std::vector<std::string>{kUuid1});
  EXPECT_EQ(p.pids_seen, std::vector<int>{611});
  p = PlaceEngine(apps, {611}, gpus[1]);
  EXPECT_TRUE(p.on_selected);
  EXPECT_TRUE(p.other_uuids.empty());
  p = PlaceEngine(apps, {5}, gpus[1]);
  EXPECT_FALSE(p.on_selected);
  EXPECT_TRUE(p.other_uuids.empty());
  EXPECT_TRUE(p.pids_seen.empty());
}

// Answers nvidia-smi command lines from a table; counts the calls.
class TableRunner : public CommandRunner {
 public:
  std::map<std::string, std::string> answers;  // "arg1 arg2" -> stdout
  Status fail = Status::Ok();
  std::vector<std::string> calls;
  double last_timeout = -1;

  Status Run(const std::vector<std::string>& argv, std::string* out, double timeout_s) override {
    std::string key;
    for (size_t i = 1; i < argv.size(); ++i) key += (i > 1 ? " " : "") + argv[i];
    calls.push_back(argv[0] + " " + key);
    last_timeout = timeout_s;
    if (!fail.ok()) return fail;
    auto it = answers.find(key);
    if (it == answers.end()) return Status::Unavailable(argv[0] + ": exit status 2: no answer");
    *out = it->second;
    return Status::Ok();
  }
};

const char kQueryArgs[] =
    "--query-gpu=index,uuid,name,pci.bus_id,memory.used,memory.total,utilization.gpu "
    "--format=csv,noheader,nounits";
const char kAppsArgs[] =
    "--query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits";

TEST(GpuReaderTest, ReadsTheSelectedCardWithTheDocumentedCommand) {
  auto cap = LoadCapture("capture_h200x2.txt");
  TableRunner runner;
  runner.answers[kQueryArgs] = cap["query_gpu_busy_nounits"].text;
  runner.answers[kAppsArgs] = cap["apps_one_nounits"].text;
  GpuReaderOptions opts;
  opts.nvidia_smi = "/usr/bin/nvidia-smi";
  opts.timeout_s = 3;
  GpuReader reader(&runner, opts);
  GpuSelector sel;
  ASSERT_TRUE(GpuSelector::Parse(kUuid1, &sel).ok());
  GpuInfo g;
  std::vector<GpuInfo> all;
  ASSERT_TRUE(reader.Read(sel, &g, &all).ok());
  EXPECT_EQ(g.index, 1);
  EXPECT_EQ(g.mem_used_mib, 1551.0);
  EXPECT_EQ(all.size(), 2u);
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_EQ(runner.calls[0], std::string("/usr/bin/nvidia-smi ") + kQueryArgs);
  EXPECT_EQ(runner.last_timeout, 3);
  std::vector<GpuApp> apps;
  ASSERT_TRUE(reader.QueryComputeApps(&apps).ok());
  EXPECT_EQ(apps.size(), 1u);
  EXPECT_EQ(runner.calls[1], std::string("/usr/bin/nvidia-smi ") + kAppsArgs);
}

TEST(GpuReaderTest, MigSelectorReadsTheParentGpuAndCachesTheListing) {
  TableRunner runner;
  runner.answers[kQueryArgs] =
      "0, GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77, NVIDIA A100-SXM4-40GB, 00000000:07:00.0, "
      "20012, 40960, [N/A]\n"
      "1, GPU-9a1b2c3d-0000-1111-2222-333344445555, NVIDIA A100-SXM4-40GB, 00000000:0F:00.0, 0, "
      "40960, 0\n";
  runner.answers["-L"] = kMigListing;
  GpuReader reader(&runner);
  GpuSelector sel;
  ASSERT_TRUE(GpuSelector::Parse("MIG-cba663e8-9bed-5b25-b243-5985ef7c9beb", &sel).ok());
  GpuInfo g;
  ASSERT_TRUE(reader.Read(sel, &g).ok());
  EXPECT_EQ(g.index, 0);
  EXPECT_EQ(g.mig_uuid, "MIG-cba663e8-9bed-5b25-b243-5985ef7c9beb");
  EXPECT_EQ(g.mem_used_mib, 20012.0);
  EXPECT_FALSE(g.util_pct.has_value());
  ASSERT_TRUE(reader.Read(sel, &g).ok());
  EXPECT_EQ(runner.calls.size(), 3u);  // query, -L, query: the listing is cached
  EXPECT_EQ(runner.calls[1], "nvidia-smi -L");

  ASSERT_TRUE(GpuSelector::Parse("MIG-00000000-0000-0000-0000-000000000000", &sel).ok());
  Status st = reader.Read(sel, &g);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(),
            "MIG instance MIG-00000000-0000-0000-0000-000000000000 is not on this machine "
            "(nvidia-smi -L lists none such)");
}

TEST(GpuReaderTest, MissingNvidiaSmiIsNotFound) {
  RealCommandRunner runner;
  GpuReaderOptions opts;
  opts.nvidia_smi = "evalrun-test-no-such-nvidia-smi";
  GpuReader reader(&runner, opts);
  GpuSelector sel;
  ASSERT_TRUE(GpuSelector::Parse("0", &sel).ok());
  GpuInfo g;
  Status st = reader.Read(sel, &g);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(),
            "evalrun-test-no-such-nvidia-smi: cannot run it: No such file or directory (looked "
            "on PATH)");
  EXPECT_EQ(reader.Read(GpuSelector(), &g).code(), Status::Code::kInvalidInput);
}

TEST(RealCommandRunnerTest, OutputExitStatusAndTimeout) {
  RealCommandRunner runner;
  std::string out;
  ASSERT_TRUE(runner.Run({"echo", "a b", "c"}, &out, 10).ok());
  EXPECT_EQ(out, "a b c\n");  // arguments reach the program as given: no shell splits them
  Status st =
      runner.Run({"sh", "-c", "echo partial; echo 'No devices were found' >&2; exit 6"}, &out, 10);
  EXPECT_EQ(st.code(), Status::Code::kUnavailable);
  EXPECT_EQ(st.message(), "sh: exit status 6: No devices were found");
  EXPECT_EQ(out, "partial\n");
  st = runner.Run({"sleep", "5"}, &out, 0.2);
  EXPECT_EQ(st.code(), Status::Code::kTimeout);
  EXPECT_EQ(st.message(), "sleep: no answer within 0.2 s (killed)");
  st = runner.Run({"/nonexistent/dir/nvidia-smi"}, &out, 1);
  EXPECT_EQ(st.code(), Status::Code::kNotFound);
  EXPECT_EQ(st.message(), "/nonexistent/dir/nvidia-smi: cannot run it: No such file or directory");
}

}  // namespace
}  // namespace evalrun
