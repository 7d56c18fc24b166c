#pragma once

#include <QDebug>
#include <QString>
#include <QTest>

/// QVERIFY2 for failures whose explanation is long (the server harness appends the logs of
/// every Redis node and Sentinel): QTest cuts a failure message at about 1 KB, so the whole
/// text is printed as a warning first and the failure line points to it. `condition` is
/// evaluated once.
#define PAYONCE_VERIFY_PRINTING(condition, text)                                                                       \
    do {                                                                                                               \
        const bool payonceHeld = static_cast<bool>(condition);                                                         \
        if (!payonceHeld)                                                                                              \
            qWarning().noquote() << (text);                                                                            \
        QVERIFY2(payonceHeld,                                                                                          \
                 qPrintable(                                                                                           \
                     QStringLiteral("%1 (the whole message and the logs are above)").arg(QLatin1String(#condition)))); \
    } while (false)
