// QHeaderView::paintSection sets SortDown for AscendingOrder; this reads the header's real
// order back and draws the arrow from it.
#include "SortArrowStyle.h"

#include <QHeaderView>
#include <QStyleOptionHeader>

namespace halo::gui {

QStyleOptionHeader::SortIndicator SortArrowStyle::arrow_for(Qt::SortOrder order) {
  return order == Qt::AscendingOrder ? QStyleOptionHeader::SortUp : QStyleOptionHeader::SortDown;
}

void SortArrowStyle::drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                                   const QWidget* widget) const {
  const auto* header = qobject_cast<const QHeaderView*>(widget);
  const auto* opt = qstyleoption_cast<const QStyleOptionHeader*>(option);
  if (element != PE_IndicatorHeaderArrow || !header || !opt || opt->sortIndicator == QStyleOptionHeader::None)
    return QProxyStyle::drawPrimitive(element, option, painter, widget);
  QStyleOptionHeader fixed(*opt);
  fixed.sortIndicator = arrow_for(header->sortIndicatorOrder());
  QProxyStyle::drawPrimitive(element, &fixed, painter, widget);
}

}  // namespace halo::gui
