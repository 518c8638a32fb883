// The workbench's one colour cycle (matplotlib's tab10), so rank k has the same colour in
// the live plots, the layout and the strategy bars; runs get theirs from their id.
#pragma once

#include <QColor>

#include <cstdint>

namespace halo::gui {

QColor series_color(int index);
// A run's colour in every plot, fixed by its history id: the cycle from green on (blue and
// orange stay ranks 0 and 1 of the memory panel).
QColor run_color(int64_t run_id);

}  // namespace halo::gui
