// The GPU's memory and utilisation, read with nvidia-smi, behind two small
// interfaces: CommandRunner runs a program (RealCommandRunner: through the
// process runner, evals/proc/process_runner.h: no shell, its own process
// group killed at the end, a deadline), GpuReader builds the nvidia-smi command lines and
// parses what they print. Tests give GpuReader a fake runner that answers
// with the captures in tests/fixtures/nvidia-smi/ (made on H200 machines by
// tests/fixtures/nvidia-smi/capture.sh).
//
// What nvidia-smi 580.159 prints (see the captures):
//   --query-gpu=index,uuid,name,pci.bus_id,memory.used,memory.total,utilization.gpu
//   --format=csv,noheader,nounits
//     0, GPU-44031c57-c03e-9498-349b-24940666ea75, NVIDIA H200, 00000000:00:06.0, 0, 143771, 0
//   without nounits the numbers carry units ("0 MiB", "143771 MiB", "0 %"), and
//   without noheader a header line comes first; both are accepted. A value the
//   driver cannot give reads "[N/A]" or "[Not Supported]" (utilization.gpu of a
//   GPU in MIG mode, for one): it parses to an empty optional.
//   --query-compute-apps=pid,gpu_uuid,used_memory --format=csv,noheader,nounits
//     611, GPU-7241817d-e329-fd9d-3d05-9568059f6df6, 1542
//   and nothing at all when no process uses a GPU.
//   -L lists "GPU 0: NVIDIA H200 (UUID: GPU-...)" and, under a GPU in MIG mode,
//   "  MIG 1g.18gb     Device  0: (UUID: MIG-...)".
// nvidia-smi's indices follow PCI bus order, which need not be CUDA's order
// (CUDA_DEVICE_ORDER=FASTEST_FIRST); a UUID names a card without ambiguity.
//
// Thread-safety: RealCommandRunner is thread-safe (its ProcessRunner is). A GpuReader
// caches the MIG listing and must be used by one thread at a time (the
// sampler's); the parsing functions are pure.
#ifndef EVALRUN_EVALS_WATCH_GPU_READER_H_
#define EVALRUN_EVALS_WATCH_GPU_READER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "evals/base/status.h"
#include "evals/proc/process_runner.h"

namespace evalrun {

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;

  // Runs argv[0] (looked up on PATH) with arguments argv[1..], without a
  // shell, stdin from /dev/null. On success (exit status 0) *stdout_text
  // holds what it wrote to standard output. Failures:
  //   NotFound     the program does not exist or cannot be executed;
  //   Timeout      still running after timeout_s: it was killed (SIGKILL);
  //   Unavailable  it exited non-zero or died of a signal: the message holds
  //                the status and the first line of its stderr (else stdout).
  // *stdout_text may hold partial output after a failure.
  virtual Status Run(const std::vector<std::string>& argv, std::string* stdout_text,
                     double timeout_s) = 0;
};

class RealCommandRunner : public CommandRunner {
 public:
  // `runner` is not owned; null: RealProcessRunner::Default().
  explicit RealCommandRunner(ProcessRunner* runner = nullptr)
      : runner_(runner ? runner : RealProcessRunner::Default()) {}
  Status Run(const std::vector<std::string>& argv, std::string* stdout_text,
             double timeout_s) override;

 private:
  ProcessRunner* runner_;
};

// One line of --query-gpu.
struct GpuInfo {
  int index = -1;
  std::string uuid;    // "GPU-44031c57-..."
  std::string name;    // "NVIDIA H200"
  std::string bus_id;  // "00000000:00:06.0"
  std::optional<double> mem_used_mib;
  std::optional<double> mem_total_mib;
  std::optional<double> util_pct;
  // Set by GpuReader::Read when the selector named a MIG instance of this
  // GPU: the numbers above are then the whole GPU's.
  std::string mig_uuid;
};

// One line of --query-compute-apps.
struct GpuApp {
  int pid = 0;
  std::string gpu_uuid;  // the physical GPU's (or, on some drivers, the MIG instance's)
  std::optional<double> used_mib;
};

// One entry of nvidia-smi -L, with its MIG instances.
struct GpuDevice {
  struct Mig {
    int device_index = -1;
    std::string profile;  // "1g.18gb"
    std::string uuid;     // "MIG-..."
  };
  int index = -1;
  std::string name;
  std::string uuid;
  std::vector<Mig> migs;
};

// Which card to read: none, an nvidia-smi index, or a UUID ("GPU-..." or
// "MIG-...", compared without regard to case).
struct GpuSelector {
  enum class Kind { kNone, kIndex, kUuid };
  Kind kind = Kind::kNone;
  int index = -1;
  std::string uuid;

  // "0", "GPU-44031c57-...", "MIG-..."; "" or "none" is kNone.
  static Status Parse(std::string_view text, GpuSelector* selector);
  std::string ToString() const;  // "index 0", "GPU-...", "none"
};

// Parsers (ninja's "every parser takes a string"). Failures are InvalidInput
// naming the line number and the field.
Status ParseGpuQueryCsv(std::string_view text, std::vector<GpuInfo>* gpus);
Status ParseComputeAppsCsv(std::string_view text, std::vector<GpuApp>* apps);
Status ParseGpuListing(std::string_view text, std::vector<GpuDevice>* devices);

// Picks the GPU named by an index or a GPU-... UUID from `gpus`. NotFound
// lists the GPUs there are. (A MIG-... UUID needs the -L listing: see
// GpuReader::Read.)
Status SelectGpu(const std::vector<GpuInfo>& gpus, const GpuSelector& selector, GpuInfo* gpu);

// Where the engine's processes hold GPU memory, according to
// --query-compute-apps. `other_uuids` lists the other GPUs (sorted, unique)
// that hold engine pids.
struct EnginePlacement {
  bool on_selected = false;
  std::vector<std::string> other_uuids;
  std::vector<int> pids_seen;  // engine pids that appear at all (sorted)
};
EnginePlacement PlaceEngine(const std::vector<GpuApp>& apps, const std::vector<int>& engine_pids,
                            const GpuInfo& selected);

struct GpuReaderOptions {
  std::string nvidia_smi = "nvidia-smi";  // program name or path
  double timeout_s = 10;                  // per nvidia-smi call
};

class GpuReader {
 public:
  // `runner` is not owned and must outlive the reader.
  explicit GpuReader(CommandRunner* runner, GpuReaderOptions options = {});

  // Runs --query-gpu and writes every GPU to *gpus.
  Status QueryGpus(std::vector<GpuInfo>* gpus);
  // Runs --query-compute-apps and writes every process to *apps (may be empty).
  Status QueryComputeApps(std::vector<GpuApp>* apps);
  // Runs -L.
  Status ListDevices(std::vector<GpuDevice>* devices);

  // Reads the card `selector` names into *gpu; when `all` is not null, every
  // GPU's line too. A MIG-... selector is resolved to its parent GPU through
  // -L (run once, then cached) and gpu->mig_uuid is set. kNone is
  // InvalidInput. Errors of nvidia-smi pass through (NotFound when it is not
  // installed), prefixed with the command.
  Status Read(const GpuSelector& selector, GpuInfo* gpu, std::vector<GpuInfo>* all = nullptr);

 private:
  Status RunSmi(const std::vector<std::string>& args, std::string* out);

  CommandRunner* runner_;
  GpuReaderOptions options_;
  std::string mig_uuid_cached_;  // the MIG selector resolved last
  std::string mig_parent_uuid_;  // ... and its parent GPU's UUID
};

}  // namespace evalrun

#endif  // EVALRUN_EVALS_WATCH_GPU_READER_H_
