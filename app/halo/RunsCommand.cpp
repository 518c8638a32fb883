// `halo runs list|show|compare|metrics|tag|note|delete`: the run history (core/store) as
// tables or --json. Readers open the file read-only; tag/note/delete edit rows, never files.
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "Commands.h"
#include "store/HistoryDb.h"
#include "util/Error.h"

namespace halo::app {

namespace {

using store::HistoryDb;
using store::RunRecord;

struct RunsArgs {
  std::string db, status, tag, key, text;
  std::vector<int64_t> ids;  // compare
  int64_t id = 0;            // every other verb
  bool json = false, csv = false, yes = false;
};

std::string when(const std::optional<double>& t) {
  if (!t) return "-";
  const std::time_t s = static_cast<std::time_t>(*t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&s));
  return buf;
}

nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json parse_or_string(const std::string& s) {
  auto j = nlohmann::json::parse(s, nullptr, false);
  return j.is_discarded() ? nlohmann::json(s) : j;
}

nlohmann::json run_json(const RunRecord& r) {
  return {{"id", r.id},
          {"name", r.name},
          {"status", store::to_string(r.status)},
          {"steps", r.steps()},
          {"last_step", r.last_step ? nlohmann::json(*r.last_step) : nlohmann::json(nullptr)},
          {"strategy", r.strategy},
          {"sp", r.sp},
          {"dp", r.dp},
          {"start_time", opt(r.start_time)},
          {"end_time", opt(r.end_time)},
          {"exit_reason", r.exit_reason},
          {"host", r.host},
          {"run_dir", r.run_dir},
          {"tags", r.tags}};
}

std::unique_ptr<HistoryDb> open_db(const std::string& given, HistoryDb::Mode mode) {
  return std::make_unique<HistoryDb>(HistoryDb::resolve_path(given), mode);
}

RunRecord need_run(HistoryDb& db, int64_t id) {
  auto r = db.run(id);
  if (!r) throw util::Error(fmt::format("no run {} in {}", id, db.path()), "see `halo runs list`");
  return *r;
}

void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else {
    out[prefix] = j.dump();
  }
}

std::string num(const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : "NaN"; }

void list(const RunsArgs& a) {
  const std::string path = HistoryDb::resolve_path(a.db);
  if (!std::filesystem::exists(path)) {
    if (a.json)
      std::printf("[]\n");
    else
      std::printf("no runs recorded yet (%s)\n", path.c_str());
    return;
  }
  std::optional<store::RunStatus> status;
  if (!a.status.empty()) {
    status = store::parse_run_status(a.status);
    if (!status)
      throw util::Error(fmt::format("unknown status '{}'", a.status),
                        "use SCHEDULED, RUNNING, FINISHED, FAILED, KILLED or INTERRUPTED");
  }
  HistoryDb db(path, HistoryDb::Mode::Read);
  const auto runs = db.list_runs(status, a.tag.empty() ? std::nullopt : std::optional<std::string>(a.tag));
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : runs) j.push_back(run_json(r));
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("%5s  %-24s %-12s %8s  %-16s %-7s %-19s  %s\n", "id", "name", "status", "steps", "strategy", "sp x dp",
              "started", "tags");
  for (const auto& r : runs) {
    std::string tags;
    for (const auto& t : r.tags) tags += (tags.empty() ? "" : ",") + t;
    std::printf("%5lld  %-24s %-12s %8lld  %-16s %-7s %-19s  %s\n", static_cast<long long>(r.id), r.name.c_str(),
                store::to_string(r.status).c_str(), static_cast<long long>(r.steps()), r.strategy.c_str(),
                fmt::format("{}x{}", r.sp, r.dp).c_str(), when(r.start_time).c_str(), tags.c_str());
  }
}

void show(const RunsArgs& a) {
  auto db = open_db(a.db, HistoryDb::Mode::Read);
  const RunRecord r = need_run(*db, a.id);
  const auto sums = db->metric_summaries(r.id);
  const auto peaks = db->rank_peaks(r.id);
  const auto arts = db->artifacts(r.id);
  const auto notes = db->notes(r.id);
  const auto events = db->events(r.id);
  if (a.json) {
    nlohmann::json j = run_json(r);
    j["config"] = parse_or_string(r.config);
    j["devices"] = parse_or_string(r.devices);
    j["halo_version"] = r.halo_version;
    j["git_revision"] = r.git_revision;
    j["launcher_pid"] = r.launcher_pid ? nlohmann::json(*r.launcher_pid) : nlohmann::json(nullptr);
    j["mean_step_ms"] = opt(db->mean_step_ms(r.id));
    j["metrics"] = nlohmann::json::array();
    for (const auto& m : sums)
      j["metrics"].push_back(
          {{"key", m.key}, {"points", m.points}, {"nans", m.nans}, {"best", opt(m.best)}, {"last", opt(m.last)}});
    j["ranks"] = nlohmann::json::array();
    for (const auto& p : peaks)
      j["ranks"].push_back({{"rank", p.rank},
                            {"peak_bytes", p.peak},
                            {"reserved_bytes", p.reserved},
                            {"rss_bytes", p.rss},
                            {"mean_step_ms", p.mean_step_ms}});
    j["artifacts"] = nlohmann::json::array();
    for (const auto& x : arts)
      j["artifacts"].push_back({{"kind", x.kind},
                                {"path", x.path},
                                {"sha256", x.sha256},
                                {"bytes", x.bytes ? nlohmann::json(*x.bytes) : nlohmann::json(nullptr)}});
    j["notes"] = nlohmann::json::array();
    for (const auto& n : notes) j["notes"].push_back({{"time", n.time}, {"text", n.text}});
    j["events"] = nlohmann::json::array();
    for (const auto& e : events) j["events"].push_back(parse_or_string(e.json));
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("run %lld: %s  %s  %lld steps\n", static_cast<long long>(r.id), r.name.c_str(),
              store::to_string(r.status).c_str(), static_cast<long long>(r.steps()));
  std::printf("  strategy %s, sp=%d dp=%d, host %s, halo %s (%s)\n", r.strategy.c_str(), r.sp, r.dp, r.host.c_str(),
              r.halo_version.c_str(), r.git_revision.c_str());
  std::printf("  started %s, ended %s, folder %s\n", when(r.start_time).c_str(), when(r.end_time).c_str(),
              r.run_dir.c_str());
  if (!r.exit_reason.empty()) std::printf("  reason: %s\n", r.exit_reason.c_str());
  if (!r.tags.empty()) std::printf("  tags: %s\n", nlohmann::json(r.tags).dump().c_str());
  std::printf("\n%-24s %8s %14s %14s\n", "metric", "points", "best", "last");
  for (const auto& m : sums)
    std::printf("%-24s %8lld %14s %14s\n", m.key.c_str(), static_cast<long long>(m.points), num(m.best).c_str(),
                num(m.last).c_str());
  std::printf("\n%4s %14s %14s %14s %12s\n", "rank", "peak MiB", "reserved MiB", "RSS MiB", "step ms");
  for (const auto& p : peaks)
    std::printf("%4d %14.1f %14.1f %14.1f %12.1f\n", p.rank, p.peak / 1048576.0, p.reserved / 1048576.0,
                p.rss / 1048576.0, p.mean_step_ms);
  for (const auto& x : arts) std::printf("\n%s %s (%s)", x.kind.c_str(), x.path.c_str(), x.sha256.c_str());
  if (!arts.empty()) std::printf("\n");
  for (const auto& n : notes) std::printf("\nnote %s: %s", when(n.time).c_str(), n.text.c_str());
  if (!notes.empty()) std::printf("\n");
}

void compare(const RunsArgs& a) {
  if (a.ids.size() < 2) throw util::Error("compare needs at least two run ids", "halo runs compare 3 4");
  auto db = open_db(a.db, HistoryDb::Mode::Read);
  std::vector<RunRecord> runs;
  std::vector<std::map<std::string, std::string>> cfgs;
  for (int64_t id : a.ids) {
    runs.push_back(need_run(*db, id));
    cfgs.emplace_back();
    flatten(parse_or_string(runs.back().config), "", cfgs.back());
  }
  std::set<std::string> keys;
  for (const auto& c : cfgs)
    for (const auto& [k, v] : c) keys.insert(k);
  nlohmann::json j = {{"runs", nlohmann::json::array()}, {"config_differences", nlohmann::json::object()}};
  for (const auto& k : keys) {
    nlohmann::json vals = nlohmann::json::array();
    bool differ = false;
    for (const auto& c : cfgs) {
      auto it = c.find(k);
      vals.push_back(it == c.end() ? nlohmann::json(nullptr) : parse_or_string(it->second));
      differ |= vals.back() != vals.front();
    }
    if (differ) j["config_differences"][k] = vals;
  }
  for (const auto& r : runs) {
    nlohmann::json e = run_json(r);
    e["mean_step_ms"] = opt(db->mean_step_ms(r.id));
    e["metrics"] = nlohmann::json::object();
    for (const auto& m : db->metric_summaries(r.id))
      e["metrics"][m.key] = {{"best", opt(m.best)}, {"last", opt(m.last)}};
    e["peak_bytes_per_rank"] = nlohmann::json::array();
    for (const auto& p : db->rank_peaks(r.id)) e["peak_bytes_per_rank"].push_back(p.peak);
    j["runs"].push_back(e);
  }
  if (a.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  auto row = [&](const std::string& label, auto cell) {
    std::printf("%-28s", label.c_str());
    for (const auto& e : j["runs"]) std::printf(" %18s", cell(e).c_str());
    std::printf("\n");
  };
  row("run", [](const nlohmann::json& e) {
    return fmt::format("{} {}", e["id"].get<int64_t>(), e["name"].get<std::string>());
  });
  row("status", [](const nlohmann::json& e) { return e["status"].get<std::string>(); });
  row("steps", [](const nlohmann::json& e) { return std::to_string(e["steps"].get<int64_t>()); });
  row("mean step ms", [](const nlohmann::json& e) {
    return e["mean_step_ms"].is_null() ? std::string("-") : fmt::format("{:.1f}", e["mean_step_ms"].get<double>());
  });
  for (const auto& [k, vals] : j["config_differences"].items()) {
    size_t i = 0;
    row("config " + k, [&](const nlohmann::json&) { return vals[i++].dump(); });
  }
  std::set<std::string> mkeys;
  for (const auto& e : j["runs"])
    for (const auto& [k, v] : e["metrics"].items()) mkeys.insert(k);
  for (const auto& k : mkeys)
    for (const char* which : {"best", "last"})
      row(k + " " + which, [&](const nlohmann::json& e) {
        if (!e["metrics"].contains(k) || e["metrics"][k][which].is_null()) return std::string("-");
        return fmt::format("{:.6g}", e["metrics"][k][which].get<double>());
      });
  size_t ranks = 0;
  for (const auto& e : j["runs"]) ranks = std::max(ranks, e["peak_bytes_per_rank"].size());
  for (size_t r = 0; r < ranks; ++r)
    row(fmt::format("peak MiB rank {}", r), [&](const nlohmann::json& e) {
      return r < e["peak_bytes_per_rank"].size()
                 ? fmt::format("{:.1f}", e["peak_bytes_per_rank"][r].get<double>() / 1048576.0)
                 : std::string("-");
    });
}

void metrics(const RunsArgs& a) {
  auto db = open_db(a.db, HistoryDb::Mode::Read);
  const RunRecord r = need_run(*db, a.id);
  const auto pts = db->metrics(r.id, a.key.empty() ? std::nullopt : std::optional<std::string>(a.key));
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& p : pts) j.push_back({{"step", p.step}, {"key", p.key}, {"value", opt(p.value)}});
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  if (a.csv)
    std::printf("step,key,value\n");
  else
    std::printf("%8s  %-24s %14s\n", "step", "key", "value");
  for (const auto& p : pts) {
    const std::string v = p.value ? fmt::format("{:.9g}", *p.value) : "nan";
    if (a.csv)
      std::printf("%lld,%s,%s\n", static_cast<long long>(p.step), p.key.c_str(), v.c_str());
    else
      std::printf("%8lld  %-24s %14s\n", static_cast<long long>(p.step), p.key.c_str(), v.c_str());
  }
}

void edit(const RunsArgs& a, const std::string& what) {
  auto db = open_db(a.db, HistoryDb::Mode::Write);
  const RunRecord r = need_run(*db, a.id);
  if (what == "tag") db->add_tag(r.id, a.text);
  if (what == "note") db->add_note(r.id, a.text);
  if (what == "delete") {
    db->check_deletable(r.id);  // before asking
    if (!a.yes) {
      std::fprintf(stderr, "delete run %lld (%s, %s) from %s? Files on disk are kept. [y/N] ",
                   static_cast<long long>(r.id), r.name.c_str(), store::to_string(r.status).c_str(),
                   db->path().c_str());
      std::string answer;
      std::getline(std::cin, answer);
      if (answer != "y" && answer != "Y" && answer != "yes") {
        std::fprintf(stderr, "halo: nothing deleted\n");
        throw CLI::RuntimeError(1);
      }
    }
    db->delete_run(r.id);
  }
  if (a.json)
    std::printf("%s\n", nlohmann::json({{"id", r.id}, {"ok", true}, {"action", what}}).dump().c_str());
  else
    std::printf("run %lld: %s done\n", static_cast<long long>(r.id), what.c_str());
}

}  // namespace

void add_runs_commands(CLI::App& app) {
  auto* runs = app.add_subcommand("runs", "Run history: list, show, compare, metrics, tag, note, delete");
  runs->require_subcommand(1);
  auto verb = [&](const std::string& name, const std::string& help, void (*fn)(const RunsArgs&)) {
    auto a = std::make_shared<RunsArgs>();
    auto* c = runs->add_subcommand(name, help);
    c->add_option("--db", a->db, "history file (default: $HALO_DB, else ~/.local/share/halo/history.db)");
    c->add_flag("--json", a->json, "print JSON");
    c->callback([a, fn]() { fn(*a); });
    return std::make_pair(c, a);
  };
  auto [l, la] = verb("list", "Runs, oldest first", &list);
  l->add_option("--status", la->status, "only runs with this status (FINISHED, FAILED, KILLED, INTERRUPTED, ...)");
  l->add_option("--tag", la->tag, "only runs with this tag");
  auto [s, sa] = verb("show", "One run: config, metrics (best/last), memory per rank, artifacts, notes", &show);
  s->add_option("id", sa->id, "run id")->required();
  auto [c, ca] =
      verb("compare", "Runs side by side: config differences, best/last metrics, peak memory, step time", &compare);
  c->add_option("ids", ca->ids, "two or more run ids")->required()->expected(2, 1000);
  auto [m, ma] = verb("metrics", "A run's metric values by step (table, --csv or --json)", &metrics);
  m->add_option("id", ma->id, "run id")->required();
  m->add_option("--key", ma->key, "only this metric (e.g. loss, lr, time_ms.total)");
  m->add_flag("--csv", ma->csv, "print CSV: step,key,value");
  auto [t, ta] = verb("tag", "Add a tag to a run", [](const RunsArgs& a) { edit(a, "tag"); });
  t->add_option("id", ta->id, "run id")->required();
  t->add_option("tag", ta->text, "tag")->required();
  auto [n, na] = verb("note", "Add a note to a run", [](const RunsArgs& a) { edit(a, "note"); });
  n->add_option("id", na->id, "run id")->required();
  n->add_option("text", na->text, "note text")->required();
  auto [d, da] = verb("delete", "Delete a run's history rows (asks first; files on disk are kept)",
                      [](const RunsArgs& a) { edit(a, "delete"); });
  d->add_option("id", da->id, "run id")->required();
  d->add_flag("--yes,-y", da->yes, "do not ask");
}

}  // namespace halo::app
