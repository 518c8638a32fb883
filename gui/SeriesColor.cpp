// tab10, cycled.
#include "SeriesColor.h"

#include <iterator>

namespace halo::gui {

QColor series_color(int index) {
  static const QColor colors[] = {
      QColor(31, 119, 180), QColor(255, 127, 14),  QColor(44, 160, 44),   QColor(214, 39, 40),  QColor(148, 103, 189),
      QColor(140, 86, 75),  QColor(227, 119, 194), QColor(127, 127, 127), QColor(188, 189, 34), QColor(23, 190, 207)};
  return colors[static_cast<size_t>(index < 0 ? 0 : index) % std::size(colors)];
}

QColor run_color(int64_t run_id) { return series_color(2 + static_cast<int>(((run_id - 1) % 8 + 8) % 8)); }

}  // namespace halo::gui
