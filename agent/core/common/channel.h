#pragma once

#include <QString>

#include <array>
#include <optional>

namespace payonce::core {

/// A payment platform. Stored and sent as its wire name.
enum class Channel {
    WeChat,
    Alipay
};

inline constexpr std::array allChannels{Channel::WeChat, Channel::Alipay};

/// "wechat" | "alipay"
QString channelName(Channel channel);
std::optional<Channel> channelFromName(QStringView name);

} // namespace payonce::core
