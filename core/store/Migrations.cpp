// Version 1: the first schema. Version 2: runs.run_dir (the run folder) and an index to
// find a run's artifacts by path. Version 3: 'pretrained' artifacts. Times are Unix seconds.
#include "store/Migrations.h"

namespace halo::store {

const std::vector<std::string>& migrations() {
  static const std::vector<std::string> m = {
      // 1: first schema
      R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  config TEXT NOT NULL,
  strategy TEXT NOT NULL DEFAULT '',
  sp INTEGER NOT NULL DEFAULT 1,
  dp INTEGER NOT NULL DEFAULT 1,
  devices TEXT NOT NULL DEFAULT '[]',
  status TEXT NOT NULL CHECK (status IN ('SCHEDULED','RUNNING','FINISHED','FAILED','KILLED','INTERRUPTED')),
  start_time REAL,
  end_time REAL,
  exit_reason TEXT NOT NULL DEFAULT '',
  host TEXT NOT NULL DEFAULT '',
  halo_version TEXT NOT NULL DEFAULT '',
  git_revision TEXT NOT NULL DEFAULT '',
  last_step INTEGER,
  launcher_pid INTEGER
);
CREATE INDEX runs_status ON runs(status);
CREATE TABLE metrics (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  key TEXT NOT NULL,
  value REAL,
  is_nan INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX metrics_run_key_step ON metrics(run_id, key, step);
CREATE TABLE samples (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  step INTEGER NOT NULL,
  mem_current INTEGER, mem_peak INTEGER, mem_reserved INTEGER, rss INTEGER,
  forward_ms REAL, backward_ms REAL, comm_ms REAL, optim_ms REAL, total_ms REAL
);
CREATE INDEX samples_run_rank_step ON samples(run_id, rank, step);
CREATE TABLE layouts (
  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  json TEXT NOT NULL
);
CREATE TABLE evaluations (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step INTEGER,
  json TEXT NOT NULL
);
CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  rank INTEGER,
  kind TEXT NOT NULL,
  time REAL NOT NULL,
  json TEXT NOT NULL
);
CREATE INDEX events_run ON events(run_id, kind);
CREATE TABLE artifacts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('checkpoint','export')),
  step INTEGER,
  path TEXT NOT NULL,
  bytes INTEGER,
  sha256 TEXT,
  time REAL NOT NULL
);
CREATE TABLE tags (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  tag TEXT NOT NULL,
  PRIMARY KEY (run_id, tag)
);
CREATE TABLE notes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  time REAL NOT NULL,
  text TEXT NOT NULL
);
)sql",
      // 2: the run folder of each run; artifacts by path
      R"sql(
ALTER TABLE runs ADD COLUMN run_dir TEXT NOT NULL DEFAULT '';
CREATE INDEX artifacts_path ON artifacts(path);
)sql",
      // 3: artifacts of kind 'pretrained' (the model.pretrained file a run started from)
      R"sql(
CREATE TABLE artifacts_v3 (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('checkpoint','export','pretrained')),
  step INTEGER,
  path TEXT NOT NULL,
  bytes INTEGER,
  sha256 TEXT,
  time REAL NOT NULL
);
INSERT INTO artifacts_v3(id, run_id, kind, step, path, bytes, sha256, time)
  SELECT id, run_id, kind, step, path, bytes, sha256, time FROM artifacts;
DROP TABLE artifacts;
ALTER TABLE artifacts_v3 RENAME TO artifacts;
CREATE INDEX artifacts_path ON artifacts(path);
)sql",
  };
  return m;
}

}  // namespace halo::store
