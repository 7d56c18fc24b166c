#include "setuproutes.h"

#include "errormapping.h"
#include "httpserver.h"
#include "jsonbody.h"

#include "core/orders/setupcodec.h"
#include "core/orders/setupservice.h"

namespace payonce::http {

namespace {

namespace codec = core::setupcodec;

HttpReply setupErrorReply(const core::SetupError &error)
{
    if (error.code == core::SetupErrorCode::Storage)
        return errorReply(error.cause);
    return errorReply(core::setupErrorName(error.code), error.message);
}

} // namespace

void registerSetupRoutes(HttpServer &server, core::SetupService &service)
{
    core::SetupService *setup = &service;

    server.route(
        Method::Put, QStringLiteral("/api/v1/skus/<sku_id>"), Role::Operator, [setup](const HttpRequest &request) {
            const auto body = parseJsonObject(request.body);
            if (!body)
                return errorReply(body.error());
            const auto stock = codec::decodeStock(body.value());
            if (!stock)
                return setupErrorReply(stock.error());
            const auto stored = setup->setSkuStock(request.pathArgument(QStringLiteral("sku_id")), stock.value());
            if (!stored)
                return setupErrorReply(stored.error());
            return HttpReply::ok(codec::encodeSkuStock(stored.value()));
        });

    server.route(Method::Get, QStringLiteral("/api/v1/skus/<sku_id>"), Role::Viewer,
                 [setup](const HttpRequest &request) {
                     const auto sku = setup->skuStock(request.pathArgument(QStringLiteral("sku_id")));
                     if (!sku)
                         return setupErrorReply(sku.error());
                     return HttpReply::ok(codec::encodeSkuStock(sku.value()));
                 });

    server.route(Method::Post, QStringLiteral("/api/v1/orders"), Role::Operator, [setup](const HttpRequest &request) {
        const auto body = parseJsonObject(request.body);
        if (!body)
            return errorReply(body.error());
        const auto draft = codec::decodeOrderDraft(body.value());
        if (!draft)
            return setupErrorReply(draft.error());
        const auto created = setup->createOrder(draft.value());
        if (!created)
            return setupErrorReply(created.error());
        return HttpReply::created(codec::encodeOrderDetail(created.value()));
    });

    server.route(Method::Get, QStringLiteral("/api/v1/orders/<order_no>"), Role::Viewer,
                 [setup](const HttpRequest &request) {
                     const auto order = setup->orderDetail(request.pathArgument(QStringLiteral("order_no")));
                     if (!order)
                         return setupErrorReply(order.error());
                     return HttpReply::ok(codec::encodeOrderDetail(order.value()));
                 });
}

} // namespace payonce::http
