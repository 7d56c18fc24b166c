#include "paymentrecord.h"

#include <array>
#include <utility>

namespace payonce::core {

namespace {
constexpr std::array<std::pair<PaymentRecordStatus, const char *>, 5> kNames{{
    {PaymentRecordStatus::Creating, "creating"},
    {PaymentRecordStatus::Pending, "pending"},
    {PaymentRecordStatus::Paid, "paid"},
    {PaymentRecordStatus::Failed, "failed"},
    {PaymentRecordStatus::Closed, "closed"},
}};
} // namespace

QString paymentRecordStatusName(PaymentRecordStatus status)
{
    for (const auto &[value, name] : kNames) {
        if (value == status)
            return QString::fromLatin1(name);
    }
    Q_UNREACHABLE();
}

std::optional<PaymentRecordStatus> paymentRecordStatusFromName(QStringView name)
{
    for (const auto &[value, text] : kNames) {
        if (name == QLatin1String(text))
            return value;
    }
    return std::nullopt;
}

} // namespace payonce::core
