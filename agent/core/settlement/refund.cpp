#include "core/settlement/refund.h"

#include <array>
#include <utility>

namespace payonce::core {

namespace {
constexpr std::array<std::pair<RefundStatus, const char *>, 4> kNames{{
    {RefundStatus::Requested, "requested"},
    {RefundStatus::Processing, "processing"},
    {RefundStatus::Succeeded, "succeeded"},
    {RefundStatus::Failed, "failed"},
}};
} // namespace

QString refundStatusName(RefundStatus status)
{
    for (const auto &[value, name] : kNames) {
        if (value == status)
            return QString::fromLatin1(name);
    }
    return QStringLiteral("requested");
}

std::optional<RefundStatus> refundStatusFromName(QStringView name)
{
    for (const auto &[value, text] : kNames) {
        if (name == QLatin1String(text))
            return value;
    }
    return std::nullopt;
}

QString refundNoFor(qint64 compensationId)
{
    return QStringLiteral("RF") + QString::number(compensationId).rightJustified(18, QLatin1Char('0'));
}

} // namespace payonce::core
