// Writer: step events of `ranks` ranks through HistoryDb::record_event, as the launcher
// does. Reader: a second, read-only connection counting the run's rows every 5 ms.
#include "store/StoreBench.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <memory>
#include <thread>

#include "store/HistoryDb.h"

namespace halo::store {

namespace fs = std::filesystem;
using clk = std::chrono::steady_clock;

StoreBenchReport run_store_bench(const StoreBenchOptions& o) {
  const bool temp = o.db_path.empty();
  const std::string path =
      temp ? (fs::temp_directory_path() / ("halo-bench-store-" + std::to_string(::getpid()) + ".db")).string()
           : o.db_path;
  auto remove_all = [&] {
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  };
  if (temp) remove_all();
  StoreBenchReport rep;
  {
    HistoryDb db(path, HistoryDb::Mode::Write);
    const nlohmann::json cfg = {{"name", "bench-store"},
                                {"parallel", {{"strategy", "tp"}, {"sp", o.ranks}, {"dp", 1}}}};
    const int64_t run = db.begin_run(cfg, "");
    protocol::StepEvent ev;
    ev.losses = {{"loss", 1.0}, {"loss_cls", 0.5}, {"loss_box", 0.25}, {"loss_lane", 0.125}};
    ev.lr = 1e-3;
    ev.grad_norm = 2.0;
    ev.loss_scale = 65536.0;
    ev.time_ms = {10.0, 20.0, 3.0, 1.0, 34.0};
    ev.memory = {1 << 20, 2 << 20, 4 << 20, 8 << 20, 0};
    const auto keys_per_step = static_cast<int64_t>(ev.metrics().size());  // 4 losses, lr/grad_norm/loss_scale, 5 times
    rep.steps = (o.metric_rows + keys_per_step - 1) / keys_per_step;

    std::atomic<bool> done{false}, ready{false};
    std::exception_ptr reader_error;
    std::thread reader([&] {
      std::unique_ptr<HistoryDb> rp;
      try {
        rp = std::make_unique<HistoryDb>(path, HistoryDb::Mode::Read);
      } catch (...) {
        reader_error = std::current_exception();
        ready = true;
        return;
      }
      HistoryDb& r = *rp;
      ready = true;
      double total = 0;
      while (!done || rep.reader_polls == 0) {
        const auto t0 = clk::now();
        rep.reader_rows_seen = r.metric_rows(run);
        const double ms = std::chrono::duration<double, std::milli>(clk::now() - t0).count();
        rep.reader_worst_wait_ms = std::max(rep.reader_worst_wait_ms, ms);
        total += ms;
        ++rep.reader_polls;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      rep.reader_mean_wait_ms = rep.reader_polls ? total / static_cast<double>(rep.reader_polls) : 0;
    });
    while (!ready) std::this_thread::yield();
    const auto t0 = clk::now();
    for (int64_t step = 0; step < rep.steps; ++step) {
      ev.step = step;
      ev.losses["loss"] = 1.0 / static_cast<double>(step + 1);
      for (int rank = 0; rank < o.ranks; ++rank) {
        ev.rank = rank;
        db.record_event(run, protocol::EventLine{ev, rank, std::nullopt});
      }
    }
    db.finish_run(run, RunStatus::Finished, "");
    rep.seconds = std::chrono::duration<double>(clk::now() - t0).count();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    done = true;
    reader.join();
    if (reader_error) std::rethrow_exception(reader_error);
    rep.metric_rows = db.metric_rows(run);
    rep.sample_rows = rep.steps * o.ranks;
    rep.rows_per_s = static_cast<double>(rep.metric_rows) / std::max(rep.seconds, 1e-9);
  }
  if (temp) remove_all();
  return rep;
}

}  // namespace halo::store
