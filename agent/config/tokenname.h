#pragma once

#include <QString>

#include <optional>

namespace payonce::config {

/// A token's name is who the audit trail and four-eyes say acted: two names a person
/// would read as one must be one name. A written name is kept trimmed and NFKC-normalised
/// (fullwidth letters, ligatures and composed/decomposed accents become one spelling);
/// two names are the same person when their case-folded forms are equal.
struct TokenName {
    QString name; ///< trimmed, NFKC: what principals and the audit trail carry
    QString key;  ///< name case-folded: what collisions are found by

    /// The name, or nullopt and *why (the reason, quoting nothing but the name): empty,
    /// an invisible or control character, or letters of more than one script ("dаve" with
    /// a Cyrillic а). Any one script is fine; digits, spaces and punctuation are no script.
    static std::optional<TokenName> parse(const QString &written, QString *why);
};

} // namespace payonce::config
