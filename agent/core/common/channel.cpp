#include "core/common/channel.h"

namespace payonce::core {

QString channelName(Channel channel)
{
    switch (channel) {
    case Channel::WeChat: return QStringLiteral("wechat");
    case Channel::Alipay: return QStringLiteral("alipay");
    }
    Q_UNREACHABLE();
}

std::optional<Channel> channelFromName(QStringView name)
{
    for (Channel channel : allChannels) {
        if (channelName(channel) == name)
            return channel;
    }
    return std::nullopt;
}

} // namespace payonce::core
