// A header style whose sort arrow points up for ascending and down for descending (Qt's
// QHeaderView hands styles the opposite, Windows' old convention), so ▲ means "smallest first".
#pragma once

#include <QProxyStyle>
#include <QStyleOption>

namespace halo::gui {

class SortArrowStyle : public QProxyStyle {
 public:
  using QProxyStyle::QProxyStyle;
  // The arrow QHeaderView's sort order should show.
  static QStyleOptionHeader::SortIndicator arrow_for(Qt::SortOrder order);
  void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                     const QWidget* widget = nullptr) const override;
};

}  // namespace halo::gui
