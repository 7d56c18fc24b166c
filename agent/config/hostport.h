#pragma once

#include "core/common/result.h"

#include <QString>
#include <QStringView>

namespace payonce::config {

/// A network endpoint "host:port" as written in configuration. IPv6 hosts are written in
/// brackets ("[::1]:8080") and stored without them ("::1"). A value type: parsing never
/// resolves names or touches the network.
struct HostPort {
    QString host;
    int port = 0;

    /// Parses "host:port" (port 1–65535, host non-empty). When defaultPort is > 0 the
    /// ":port" part may be omitted. Errors are ErrorCode::Misconfigured with a one-line
    /// message that quotes only the offending part.
    static core::Result<HostPort> parse(QStringView text, int defaultPort = 0);

    /// "host:port", with brackets around an IPv6 host: parse(toString()) == *this.
    QString toString() const;

    bool operator==(const HostPort &) const = default;
};

} // namespace payonce::config
