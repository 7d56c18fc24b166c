#include "hashslot.h"

#include <array>
#include <mutex>
#include <vector>

namespace payonce::redis {

namespace {

// CRC16-CCITT, polynomial 0x1021, initial value 0, no reflection: the one Redis uses.
quint16 crc16(QByteArrayView bytes)
{
    quint16 crc = 0;
    for (const char c : bytes) {
        crc ^= quint16(quint8(c)) << 8;
        for (int bit = 0; bit < 8; ++bit)
            crc = (crc & 0x8000) ? quint16((crc << 1) ^ 0x1021) : quint16(crc << 1);
    }
    return crc;
}

// The first tag (in the order of the enumeration below: "0".."z", then two characters, …)
// that lands in each slot. Every slot is reached by tags of at most 3 characters.
const std::vector<QByteArray> &slotTags()
{
    static const std::vector<QByteArray> tags = [] {
        static constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        constexpr int kLetters = sizeof(kAlphabet) - 1;
        std::vector<QByteArray> table(kClusterSlots);
        int filled = 0;
        for (int length = 1; length <= 4 && filled < kClusterSlots; ++length) {
            int combinations = 1;
            for (int i = 0; i < length; ++i)
                combinations *= kLetters;
            QByteArray tag(length, '0');
            for (int n = 0; n < combinations && filled < kClusterSlots; ++n) {
                for (int i = 0, rest = n; i < length; ++i, rest /= kLetters)
                    tag[length - 1 - i] = kAlphabet[rest % kLetters];
                QByteArray &entry = table[size_t(hashSlot(tag))];
                if (entry.isEmpty()) {
                    entry = tag;
                    ++filled;
                }
            }
        }
        return table;
    }();
    return tags;
}

} // namespace

int hashSlot(QByteArrayView key)
{
    const qsizetype open = key.indexOf('{');
    if (open >= 0) {
        const qsizetype close = key.sliced(open + 1).indexOf('}');
        if (close > 0) // an empty "{}" is no tag: the whole key is hashed
            return crc16(key.sliced(open + 1, close)) % kClusterSlots;
    }
    return crc16(key) % kClusterSlots;
}

QByteArray tagForSlot(int slot)
{
    if (slot < 0 || slot >= kClusterSlots)
        return QByteArray();
    return slotTags()[size_t(slot)];
}

} // namespace payonce::redis
