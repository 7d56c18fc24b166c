#pragma once

// Internal to payonce_testsupport.

#include <QString>

#include <memory>

namespace payonce::testsupport::detail {

/// A temporary folder for one server: <tmp>/payonce-<kind>-XXXXXX, owned by the server's
/// service user when we are root (so initdb/mariadbd can write in it), with a reaper
/// (payonce-reaper.sh) watching over it. The destructor removes the folder; the reaper
/// then notices and exits within a second. If the test process dies first, the reaper
/// stops the servers that live in the folder and removes it.
class ScratchFolder {
public:
    /// serviceUser: the user the server runs as when we are root ("postgres", "mysql"), or
    /// empty to keep the folder ours.
    static std::unique_ptr<ScratchFolder> create(const QString &kind, const QString &serviceUser, QString *error);
    ~ScratchFolder();
    ScratchFolder(const ScratchFolder &) = delete;
    ScratchFolder &operator=(const ScratchFolder &) = delete;

    QString path() const { return m_path; }
    QString filePath(const QString &name) const;
    /// A subfolder, owned by the service user as the folder is.
    bool makeSubfolder(const QString &name, QString *error) const;

private:
    ScratchFolder(QString path, QString serviceUser);
    QString m_path;
    QString m_serviceUser;
};

} // namespace payonce::testsupport::detail
