#include "scratchfolder.h"

#include "processtools.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

using namespace Qt::StringLiterals;

namespace payonce::testsupport::detail {

namespace {

bool startReaper(const QString &folder, QString *error)
{
    const QString script = QStringLiteral(PAYONCE_REAPER_SCRIPT);
    if (!QFile::exists(script)) {
        *error = u"the reaper script %1 is missing (rebuild payonce_testsupport)"_s.arg(script);
        return false;
    }
    QProcess reaper;
    reaper.setProgram(u"/bin/sh"_s);
    reaper.setArguments({script});
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(u"PAYONCE_REAPER_WATCH"_s, QString::number(QCoreApplication::applicationPid()));
    env.insert(u"PAYONCE_REAPER_FOLDER"_s, folder);
    reaper.setProcessEnvironment(env);
    reaper.setStandardInputFile(QProcess::nullDevice());
    reaper.setStandardOutputFile(QProcess::nullDevice());
    reaper.setStandardErrorFile(QProcess::nullDevice());
    if (!reaper.startDetached()) {
        *error = u"could not start the reaper %1: %2"_s.arg(script, reaper.errorString());
        return false;
    }
    return true;
}

} // namespace

ScratchFolder::ScratchFolder(QString path, QString serviceUser)
    : m_path(std::move(path)), m_serviceUser(std::move(serviceUser))
{
}

std::unique_ptr<ScratchFolder> ScratchFolder::create(const QString &kind, const QString &serviceUser, QString *error)
{
    QTemporaryDir temporary(QDir::tempPath() + u"/payonce-"_s + kind + u"-XXXXXX"_s);
    if (!temporary.isValid()) {
        *error = u"could not create a temporary folder in %1: %2"_s.arg(QDir::tempPath(), temporary.errorString());
        return nullptr;
    }
    temporary.setAutoRemove(false);
    std::unique_ptr<ScratchFolder> folder(new ScratchFolder(temporary.path(), serviceUser));
    // From here on the destructor removes the folder on any failure.
    if (!chownToUser(folder->m_path, serviceUser, error))
        return nullptr;
    if (isRoot() && !serviceUser.isEmpty()) {
        // QTemporaryDir's 0700 is fine once the folder is the service user's, but every
        // folder above it must let that user through (a TMPDIR under /root does not).
        const RunResult check = run(asUser(serviceUser, u"test"_s, {u"-w"_s, folder->m_path}));
        if (!check.ok) {
            *error = u"user %1 cannot write to %2: a folder above it is closed to other users; "
                     "point TMPDIR at a folder everyone can traverse, such as /tmp"_s.arg(serviceUser, folder->m_path);
            return nullptr;
        }
    }
    if (!startReaper(folder->m_path, error))
        return nullptr;
    return folder;
}

ScratchFolder::~ScratchFolder()
{
    QDir(m_path).removeRecursively();
}

QString ScratchFolder::filePath(const QString &name) const
{
    return m_path + u'/' + name;
}

bool ScratchFolder::makeSubfolder(const QString &name, QString *error) const
{
    const QString path = filePath(name);
    if (!QDir().mkpath(path)) {
        *error = u"could not create %1"_s.arg(path);
        return false;
    }
    return chownToUser(path, m_serviceUser, error);
}

} // namespace payonce::testsupport::detail
