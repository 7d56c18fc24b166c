#include "locksview.h"

#include "keystorebanner.h"
#include "pollwhileshown.h"
#include "tablepanel.h"

#include "console/models/locksmodel.h"
#include "console/net/agentclient.h"

#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QVBoxLayout>

namespace payonce::console {

namespace {

constexpr int kPollMs = 2000;

QGroupBox *boxed(const QString &title, QWidget *content, QWidget *parent)
{
    auto *box = new QGroupBox(title, parent);
    auto *layout = new QVBoxLayout(box);
    layout->addWidget(content);
    return box;
}

} // namespace

LocksView::LocksView(AgentClient *client, QWidget *parent)
    : QWidget(parent), m_client(client), m_locks(new LocksModel(this)), m_fences(new FencingTokensModel(this)),
      m_staleRefusals(new StaleRefusalsModel(this)), m_storedLocks(new StoredLocksModel(this)),
      m_staleCount(new QLabel(QStringLiteral("–"), this)), m_storedSummary(new QLabel(tr("Not scanned yet."), this)),
      m_keyStore(new KeyStoreBanner(nullptr, this))
{
    setObjectName(QStringLiteral("locksView"));
    m_locks->setObjectName(QStringLiteral("locksModel"));
    m_fences->setObjectName(QStringLiteral("fencesModel"));
    m_staleRefusals->setObjectName(QStringLiteral("staleRefusalsModel"));
    m_storedLocks->setObjectName(QStringLiteral("storedLocksModel"));
    m_storedSummary->setObjectName(QStringLiteral("storedLocksSummary"));
    m_storedSummary->setWordWrap(true);
    m_staleCount->setObjectName(QStringLiteral("staleRefusedCount"));
    QFont font = m_staleCount->font();
    font.setBold(true);
    font.setPointSizeF(font.pointSizeF() * 1.6);
    m_staleCount->setFont(font);

    auto *refreshButton = new QPushButton(tr("Refresh"), this);
    refreshButton->setObjectName(QStringLiteral("refreshLocks"));
    connect(refreshButton, &QPushButton::clicked, this, &LocksView::refresh);
    auto *header = new QHBoxLayout;
    header->addWidget(new QLabel(tr("Writes refused for a stale fencing token (agent total):"), this));
    header->addWidget(m_staleCount);
    header->addStretch(1);
    header->addWidget(refreshButton);

    auto *lower = new QSplitter(Qt::Horizontal, this);
    lower->addWidget(
        boxed(tr("Last fencing token per order"), new TablePanel(QStringLiteral("fences"), m_fences, this), lower));
    lower->addWidget(boxed(tr("Stale-token refusals seen live"),
                           new TablePanel(QStringLiteral("staleRefusals"), m_staleRefusals, this), lower));
    auto *scanButton = new QPushButton(tr("Scan the key store"), this);
    scanButton->setObjectName(QStringLiteral("scanStoredLocks"));
    scanButton->setToolTip(tr("Every lock the key store holds, any agent's, on every node: a lock that never "
                              "expires blocks its payment for ever"));
    connect(scanButton, &QPushButton::clicked, this, &LocksView::scanStore);
    auto *stored = new QWidget(this);
    auto *storedHeader = new QHBoxLayout;
    storedHeader->addWidget(m_storedSummary, 1);
    storedHeader->addWidget(scanButton);
    auto *storedLayout = new QVBoxLayout(stored);
    storedLayout->setContentsMargins(0, 0, 0, 0);
    storedLayout->addLayout(storedHeader);
    storedLayout->addWidget(new TablePanel(QStringLiteral("storedLocks"), m_storedLocks, stored));

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(
        boxed(tr("Pay locks held and recently lost"), new TablePanel(QStringLiteral("locks"), m_locks, this), split));
    split->addWidget(lower);
    split->addWidget(boxed(tr("Locks in the key store, every node (the key inspector)"), stored, split));

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(header);
    layout->addWidget(m_keyStore);
    layout->addWidget(split, 1);

    new PollWhileShown(this, kPollMs, [this] { refresh(); });
}

void LocksView::refresh()
{
    if (m_client->agentUrl().isEmpty() || m_fetching)
        return;
    m_fetching = true;
    m_client->get(QStringLiteral("/api/v1/locks"), this, [this](const ApiResult &result) {
        m_fetching = false;
        if (!result.ok() || !result.json.isObject())
            return;
        const QJsonObject answer = result.json.object();
        m_locks->setRows(answer.value(QStringLiteral("locks")).toArray());
        m_fences->setRows(answer.value(QStringLiteral("fencing_tokens")).toArray());
        const QJsonValue stale = answer.value(QStringLiteral("stale_fence_refused"));
        m_staleCount->setText(stale.isDouble() ? QString::number(stale.toInteger()) : QStringLiteral("–"));
        m_keyStore->showKeyStore(answer.value(QStringLiteral("key_store")).toObject());
    });
}

void LocksView::scanStore()
{
    if (m_client->agentUrl().isEmpty() || m_scanning)
        return;
    m_scanning = true;
    m_storedSummary->setText(tr("Scanning…"));
    m_client->get(QStringLiteral("/api/v1/locks/keys?limit=1000"), this, [this](const ApiResult &result) {
        m_scanning = false;
        if (!result.ok() || !result.json.isObject()) {
            m_storedSummary->setText(tr("The scan failed: %1").arg(result.error.describe()));
            return;
        }
        const QJsonObject answer = result.json.object();
        const QJsonArray locks = answer.value(QStringLiteral("locks")).toArray();
        m_storedLocks->setScan(locks);
        const int nodes = int(answer.value(QStringLiteral("nodes")).toArray().size());
        const int stuck = answer.value(QStringLiteral("stuck")).toInt();
        QString summary = tr("%n node(s) scanned", nullptr, nodes) + tr(", %n lock(s)", nullptr, int(locks.size()))
                          + tr(", %n stuck", nullptr, stuck);
        if (answer.value(QStringLiteral("truncated")).toBool())
            summary += tr(" (the first 1000 only)");
        QStringList failures;
        for (const QJsonValue &failure : answer.value(QStringLiteral("failures")).toArray())
            failures << failure.toString();
        if (!failures.isEmpty())
            summary += tr(". Not scanned: %1").arg(failures.join(QStringLiteral("; ")));
        m_storedSummary->setText(summary);
    });
}

void LocksView::applyMessage(const StreamMessage &message)
{
    if (const auto *event = std::get_if<StreamEvent>(&message.body)) {
        if (event->kind == streamevent::LockLost) {
            m_locks->applyLockLost(*event);
            refresh();
        } else if (event->kind == streamevent::FenceStaleRefused) {
            m_staleRefusals->applyStaleRefused(message, *event);
            refresh();
        }
    } else if (std::holds_alternative<StreamSnapshot>(message.body)) {
        refresh();
    }
}

} // namespace payonce::console
