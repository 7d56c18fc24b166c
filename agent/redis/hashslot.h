#pragma once

#include <QByteArray>
#include <QByteArrayView>

namespace payonce::redis {

/// Redis Cluster's key → hash slot mapping (the cluster specification's "Keys distribution
/// model"): CRC16 (XMODEM) of the key modulo 16384, of only the part between the first '{'
/// and the next '}' when that part is not empty (a hash tag), so keys that share a tag
/// share a slot — a payment's lock and its fence state must, for one Lua script to take
/// both.
constexpr int kClusterSlots = 16384;
int hashSlot(QByteArrayView key);

/// A short tag (letters and digits) whose hash slot is `slot` (0..16383): "{" + tag + "}"
/// in a key puts that key in `slot`, so state kept per slot can sit beside keys whose tag
/// is chosen by something else (an order number). The same tag for a slot on every call
/// and in every process.
QByteArray tagForSlot(int slot);

} // namespace payonce::redis
