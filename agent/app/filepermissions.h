#pragma once

#include "config/config.h"
#include "core/common/result.h"

namespace payonce::app {

/// The files the settings name, checked as a Debian service would want them:
/// - files that hold secrets — the config file (tokens' hashes, the APIv3 key, database
///   passwords), wechat.merchant_private_key, alipay.private_key — must not be readable or
///   writable by others, nor writable by their group: 0600, or 0640 with the agent's group
///   (root:payonce 0640 is what a package installs);
/// - public keys the agent trusts — wechat.platform_keys, alipay.alipay_public_key — must
///   not be writable by their group or others: whoever can write one decides which
///   signatures the agent believes.
/// A symbolic link is judged by the file it names. A file that does not exist is left to
/// the code that reads it. ErrorCode::Misconfigured naming the setting, the path, the mode
/// and what to change; there is no override.
core::Result<void> checkFilePermissions(const config::Config &config);

} // namespace payonce::app
