#include "layercolors.h"

namespace payonce::console {

QColor layerColor(Layer layer)
{
    // Distinct in hue and readable on white; "none" (first processing) is the calm one.
    switch (layer) {
    case Layer::None: return QColor(0x60, 0x7d, 0x8b);
    case Layer::IdempotencyKey: return QColor(0x1f, 0x77, 0xb4);
    case Layer::Token: return QColor(0x2c, 0xa0, 0x2c);
    case Layer::Lock: return QColor(0x94, 0x67, 0xbd);
    case Layer::UniqueIndex: return QColor(0xff, 0x7f, 0x0e);
    case Layer::StateMachine: return QColor(0x17, 0xbe, 0xcf);
    case Layer::SideEffect: return QColor(0xbc, 0xbd, 0x22);
    case Layer::Rejected: return QColor(0xd6, 0x27, 0x28);
    }
    return QColor(Qt::black);
}

QColor breakerStateColor(const QString &state)
{
    if (state == u"closed")
        return QColor(0x2c, 0xa0, 0x2c);
    if (state == u"half_open")
        return QColor(0xff, 0xa5, 0x00);
    if (state == u"open")
        return QColor(0xd6, 0x27, 0x28);
    return QColor(Qt::gray);
}

} // namespace payonce::console
