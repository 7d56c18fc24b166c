#include "core/confirm/paymentrecord.h"

#include <QRandomGenerator>

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

QString newPaymentNo()
{
    // Unique by chance: 96 bits from the system generator.
    quint32 words[3];
    QRandomGenerator::system()->fillRange(words);
    QString out = QStringLiteral("PN");
    for (quint32 word : words)
        out += QString::number(word, 16).rightJustified(8, QLatin1Char('0')).toUpper();
    return out;
}

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
