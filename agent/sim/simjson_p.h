#pragma once

// What the simulator's answers are made of, shared by its WeChat Pay, Alipay and control
// routes (simserver*.cpp).

#include "simstate.h"

#include "platform/alipay.h"

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QString>

namespace payonce::sim {

/// Requests older or newer than this are refused (WeChat Pay's signature window).
inline constexpr qint64 kRequestWindowSeconds = 300;

QByteArray compact(const QJsonObject &o);
QString randomToken(int length);
/// "a=b&c=d" form decoding: '+' is a space, then percent-decoding.
platform::alipay::Params parseForm(const QByteArray &text);
/// The value of the first parameter called name, empty when there is none.
QByteArray param(const platform::alipay::Params &params, QByteArrayView name);
/// Times as Alipay writes them: Beijing time, "yyyy-MM-dd HH:mm:ss".
QString beijingTime(const QDateTime &t);
/// The refund object of WeChat Pay's refund and refund-query answers.
QJsonObject wechatRefundJson(const SimRefund &r);
/// A trade as the control API shows it, with its refunds.
QJsonObject tradeJson(const SimTrade &t, const QList<SimRefund> &refunds);
QJsonObject faultsJson(const SimFaults &f);

} // namespace payonce::sim
