#pragma once

// The key store's Redis protocol pieces (rediskeystore.cpp, keystoreconnection.cpp): replies,
// the Lua scripts, where a fenced lock and its fence state live, lock key names.

#include "hashslot.h"

#include <QByteArray>
#include <QCryptographicHash>
#include <QList>
#include <QString>

#include <hiredis/hiredis.h>

#include <chrono>
#include <vector>

namespace payonce::redis::keystore {

using std::chrono::milliseconds;

struct Reply {
    enum class Type {
        Nil,
        Integer,
        String,
        Status,
        Error,
        Array
    };
    Type type = Type::Nil;
    long long integer = 0;
    QByteArray text;
    std::vector<Reply> elements;

    static Reply from(const redisReply *reply)
    {
        Reply result;
        switch (reply->type) {
        case REDIS_REPLY_INTEGER:
            result.type = Type::Integer;
            result.integer = reply->integer;
            break;
        case REDIS_REPLY_STRING:
            result.type = Type::String;
            result.text = QByteArray(reply->str, static_cast<qsizetype>(reply->len));
            break;
        case REDIS_REPLY_STATUS:
            result.type = Type::Status;
            result.text = QByteArray(reply->str, static_cast<qsizetype>(reply->len));
            break;
        case REDIS_REPLY_ERROR:
            result.type = Type::Error;
            result.text = QByteArray(reply->str, static_cast<qsizetype>(reply->len));
            break;
        case REDIS_REPLY_ARRAY:
            result.type = Type::Array;
            for (size_t i = 0; i < reply->elements; ++i)
                result.elements.push_back(from(reply->element[i]));
            break;
        default: result.type = Type::Nil; break;
        }
        return result;
    }

    bool isError() const { return type == Type::Error; }
    QString errorText() const { return QString::fromUtf8(text); }
};

struct Script {
    const char *name;
    QByteArray source;
    QByteArray sha;
};

inline Script makeScript(const char *name, const char *source)
{
    const QByteArray bytes(source);
    return Script{name, bytes, QCryptographicHash::hash(bytes, QCryptographicHash::Sha1).toHex()};
}

// Compare-and-delete: the token consume and the lock release.
inline const Script &compareAndDeleteScript()
{
    static const Script script = makeScript(
        "compare_and_delete",
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0");
    return script;
}

// Owner-checked lease extension.
inline const Script &renewScript()
{
    static const Script script = makeScript(
        "renew", "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end "
                 "return 0");
    return script;
}

// The instance's fence state, one hash: `epoch` (handed out by the database), `counter`
// (every token of the instance, whatever its scope), `run_id` (the process that installed
// the epoch). One key, so it is lost whole or not at all: a lost counter is a lost epoch,
// never a counter restarting inside an epoch.
inline const QByteArray &fenceStateKey()
{
    static const QByteArray key = QByteArrayLiteral("fence:state");
    return key;
}

/// Where a fenced lock and its fence state live. In cluster mode both carry the hash tag of
/// the slot of their fence scope (the order), so one script can take both, and every lock
/// fencing one order — the confirm's and the callback's — draws from the same state: per
/// slot, `fence:state:{tag}`, and the lock as `{tag}lock:…`. Otherwise the lock as named
/// and the instance's one state.
struct FencePlacement {
    QByteArray lockKey;
    QByteArray stateKey;
    int slot = 0;       ///< the hash slot the command goes to (cluster mode)
    int floorIndex = 0; ///< which of the store's floors the tokens count against
};

inline FencePlacement placeFence(bool cluster, const QString &lockKey, const QString &fenceScope)
{
    FencePlacement placement{lockKey.toUtf8(), fenceStateKey(), 0, 0};
    if (!cluster)
        return placement;
    if (fenceScope.isEmpty()) {
        placement.slot = hashSlot(placement.lockKey);
        return placement;
    }
    const int slot = hashSlot(fenceScope.toUtf8());
    const QByteArray tag = '{' + tagForSlot(slot) + '}';
    placement.lockKey = tag + placement.lockKey;
    placement.stateKey = fenceStateKey() + ':' + tag;
    placement.slot = slot;
    placement.floorIndex = slot;
    return placement;
}

/// The logical name of a stored lock key: a cluster's leading "{tag}" taken off.
inline QString logicalLockKey(const QByteArray &stored)
{
    if (stored.startsWith('{')) {
        const qsizetype close = stored.indexOf('}');
        if (close > 0)
            return QString::fromUtf8(stored.mid(close + 1));
    }
    return QString::fromUtf8(stored);
}

inline bool isLockKey(const QByteArray &stored)
{
    return logicalLockKey(stored).startsWith(QLatin1String("lock:"));
}

// Shared by the fencing scripts, which declare `epoch` and `counter` first and get them set
// here (KEYS[n] = the fence state; ARGV[3], ARGV[4] = the largest
// token this agent has seen, epoch and counter; ARGV[5] = the run_id of the node, in
// cluster mode, else empty): refuses, before anything is written, an instance without
// fence state, state installed by another process (cluster mode: a slot whose state was
// replicated to a promoted replica — single and Sentinel modes check this once per
// connection instead), a full counter, or state that went back below a token this agent
// already has (restored from an older snapshot). The caller installs a new epoch and runs
// the script again.
#define PAYONCE_FENCE_CHECK(stateKey)                                                                                  \
    "local state = redis.call('HMGET', " stateKey ", 'epoch', 'counter', 'run_id') "                                   \
    "if not state[1] then return redis.error_reply('FENCE_NO_STATE no fence state') end "                              \
    "if ARGV[5] and ARGV[5] ~= '' and state[3] ~= ARGV[5] then "                                                       \
    "return redis.error_reply('FENCE_OTHER_RUN installed by another process') end "                                    \
    "epoch, counter = tonumber(state[1]), tonumber(state[2] or '0') "                                                  \
    "if counter >= 4294967295 then return redis.error_reply('FENCE_FULL the counter is full') end "                    \
    "local floorEpoch, floorCounter = tonumber(ARGV[3]), tonumber(ARGV[4]) "                                           \
    "if epoch < floorEpoch or (epoch == floorEpoch and counter < floorCounter) then "                                  \
    "return redis.error_reply('FENCE_BEHIND below a token already handed out') end "

// The lock and its fencing token in one step: SET NX PX, and only if that won, the next
// token of the instance (KEYS[2], the fence state, when a fence scope was given).
// Returns {epoch, counter}, 0 when won without a fence scope, nil when the lock is held by
// someone else. One step, so a holder paused after winning cannot take a token above a
// successor's.
inline const Script &acquireScript()
{
    static const Script script = makeScript(
        "acquire",
        "local epoch, counter = 0, 0 "
        "if #KEYS > 1 then " PAYONCE_FENCE_CHECK(
            "KEYS[2]") "end "
                       "if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end "
                       "if #KEYS > 1 then return {epoch, redis.call('HINCRBY', KEYS[2], 'counter', 1)} end "
                       "return 0");
    return script;
}

// The next token without a lock: {epoch, counter} (ARGV[1], ARGV[2] unused).
inline const Script &nextTokenScript()
{
    static const Script script = makeScript(
        "next_token", "local epoch, counter = 0, 0 " PAYONCE_FENCE_CHECK(
                          "KEYS[1]") "return {epoch, redis.call('HINCRBY', KEYS[1], 'counter', 1)}");
    return script;
}

#undef PAYONCE_FENCE_CHECK

// Installs a new epoch (ARGV[1], from the database) with its counter at 0 for run_id
// ARGV[2], unless another agent installed a larger one meanwhile. Returns the epoch in
// force. Run with EVAL: it is needed in the handshake, before the scripts are loaded.
inline const char *const installEpochScript =
    "local current = tonumber(redis.call('HGET', KEYS[1], 'epoch') or '0') "
    "if current < tonumber(ARGV[1]) then "
    "redis.call('HSET', KEYS[1], 'epoch', ARGV[1], 'counter', 0, 'run_id', ARGV[2]) return tonumber(ARGV[1]) end "
    "return current";

// The L1 cache entry: fingerprint and response, with one expiry.
inline const Script &putResponseScript()
{
    static const Script script = makeScript(
        "put_response", "redis.call('DEL', KEYS[1]) redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'body', ARGV[2]) "
                        "redis.call('PEXPIRE', KEYS[1], ARGV[3]) return 1");
    return script;
}

inline const std::vector<const Script *> &allScripts()
{
    static const std::vector<const Script *> scripts{&compareAndDeleteScript(), &renewScript(), &acquireScript(),
                                                     &nextTokenScript(), &putResponseScript()};
    return scripts;
}

inline QByteArray msText(milliseconds duration)
{
    return QByteArray::number(static_cast<qlonglong>(duration.count()));
}

} // namespace payonce::redis::keystore
