// Temp folders under the system temp dir, named by tag and pid so parallel tests never
// share one.
#include "GuiTestSupport.h"

#include <unistd.h>

#include <QDir>

namespace halo::testing {

QString gui_fresh_dir(const QString& tag) {
  static int n = 0;
  QDir d(QDir::temp().filePath(QString("halo-gui-%1-%2-%3").arg(tag).arg(::getpid()).arg(n++)));
  d.removeRecursively();
  QDir().mkpath(d.path());
  return d.path();
}

nlohmann::json tiny_experiment(int steps) {
  return {
      {"name", "tiny"},
      {"task", "convnext"},
      {"model", {{"arch", "convnext_test"}, {"num_classes", 4}}},
      {"data", {{"source", "synthetic"}, {"views", 2}, {"height", 32}, {"width", 128}, {"batch", 2}}},
      {"parallel", {{"strategy", "tp"}, {"sp", 2}, {"dp", 1}, {"device", "cpu"}}},
      {"optim", {{"name", "adamw"}, {"lr", 0.002}}},
      {"schedule", {{"steps", steps}, {"warmup_steps", 1}}},
      {"train", {{"seed", 3}}},
  };
}

}  // namespace halo::testing
