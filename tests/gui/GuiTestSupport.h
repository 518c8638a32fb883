// Shared by the workbench tests and the screenshot tool: a fresh temp folder and a tiny,
// fast experiment (convnext_test, 2 views of 32x128, sp 2 on CPU).
#pragma once

#include <QString>

#include <nlohmann/json.hpp>

namespace halo::testing {

QString gui_fresh_dir(const QString& tag);
nlohmann::json tiny_experiment(int steps = 5);

}  // namespace halo::testing
