// The workbench's one colour cycle (matplotlib's tab10), so rank k has the same colour in
// the live plots, the layout and the strategy bars.
#pragma once

#include <QColor>

namespace halo::gui {

QColor series_color(int index);

}  // namespace halo::gui
