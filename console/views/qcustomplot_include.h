#pragma once

// qcustomplot.h uses the `signals` and `foreach` keywords, which QT_NO_KEYWORDS (set for
// all of payonce's code) removes; they come back for its own header only.
#define signals Q_SIGNALS
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef foreach
#undef signals
