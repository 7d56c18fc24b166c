#pragma once

#include "core/ports/orderrepository.h"

#include <QString>

#include <utility>
#include <variant>

namespace payonce::core {

/// Why a set-up request was refused. Each code but Storage is one of the contract's
/// error codes (docs/openapi.yaml); the HTTP layer turns its wire name into a status in
/// errormapping.cpp. Storage carries the adapter's Error unchanged (Busy, Unavailable,
/// Internal), which the HTTP layer maps by its ErrorCode.
enum class SetupErrorCode {
    InvalidRequest, ///< "invalid_request": malformed or missing field (the message names it)
    InvalidAmount,  ///< "invalid_amount": not a positive decimal string with at most 2 places
    InvalidUser,    ///< "invalid_user": a user id that is not a positive integer
    OrderNotFound,  ///< "order_not_found"
    OrderNotYours,  ///< "order_not_yours"
    OrderExists,    ///< "order_exists"
    SkuNotFound,    ///< "sku_not_found"
    Storage,        ///< the repository failed; see SetupError::cause
};

/// The wire code of a set-up error ("order_exists"); for Storage, the wire name of the
/// cause's ErrorCode is the HTTP layer's business (it answers errorReply(cause)).
QString setupErrorName(SetupErrorCode code);

/// A refused set-up request: the code, the sentence a client may see, and for Storage the
/// adapter's error.
struct SetupError {
    SetupErrorCode code = SetupErrorCode::InvalidRequest;
    QString message;
    Error cause; ///< meaningful only for Storage

    static SetupError invalid(const QString &message) { return {SetupErrorCode::InvalidRequest, message, {}}; }
    static SetupError storage(Error cause)
    {
        QString message = cause.publicMessage;
        return {SetupErrorCode::Storage, std::move(message), std::move(cause)};
    }
};

/// A value or a SetupError (the set-up API's Result).
template <typename T>
class [[nodiscard]] SetupResult {
public:
    SetupResult(T value) : m_state(std::in_place_index<0>, std::move(value)) {}
    SetupResult(SetupError error) : m_state(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return m_state.index() == 0; }
    explicit operator bool() const { return ok(); }
    const T &value() const & { return std::get<0>(m_state); }
    T &&value() && { return std::get<0>(std::move(m_state)); }
    const T *operator->() const { return &value(); }
    const SetupError &error() const { return std::get<1>(m_state); }

private:
    std::variant<T, SetupError> m_state;
};

/// order_no, sku_id, coupon template: 1–64 of [A-Za-z0-9_-] (docs/openapi.yaml).
bool isValidBusinessId(QStringView id);

/// The set-up API's rules (docs/openapi.yaml, "Orders and stock") over an OrderRepository: every
/// input is validated here, so any caller (HTTP routes, the QA driver, the demo) gets the
/// same answers, and the repository only ever sees valid values.
///
/// - setSkuStock(): sku_id valid, stock >= 0; an upsert, idempotent, safe to retry.
/// - skuStock(): SkuNotFound when the SKU does not exist.
/// - createOrder(): the draft is checked (validateOrderDraft); an existing order_no is
///   OrderExists and nothing is written. On success, the order as created (PENDING,
///   version 0, no payments or effects) — what orderDetail() would then read.
/// - orderDetail(): OrderNotFound for an unknown order (a malformed order_no is
///   InvalidRequest: it cannot name an order).
/// - orderOfUser(): orderDetail() plus ownership, for routes that act for a user:
///   InvalidUser for userId <= 0, OrderNotYours for another user's order.
/// Repository failures come back as Storage with the adapter's error.
/// Stateless apart from the repository reference; thread-safe when the repository is.
class SetupService {
public:
    explicit SetupService(OrderRepository &repository) : m_repository(repository) {}

    SetupResult<SkuStock> setSkuStock(const QString &skuId, qint64 stock);
    SetupResult<SkuStock> skuStock(const QString &skuId);
    SetupResult<OrderDetail> createOrder(const OrderDraft &order);
    SetupResult<OrderDetail> orderDetail(const QString &orderNo);
    SetupResult<OrderDetail> orderOfUser(const QString &orderNo, qint64 userId);

    /// The draft's rules; nullopt when it is valid. Messages name the field
    /// ("items[1].qty must be a positive integer"). Pure.
    static std::optional<SetupError> validateOrderDraft(const OrderDraft &order);

private:
    OrderRepository &m_repository;
};

} // namespace payonce::core
