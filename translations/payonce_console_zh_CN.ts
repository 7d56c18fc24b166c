<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>ApiError</name>
    <message>
        <location filename="../console/net/apierror.cpp" line="+16"/>
        <source>The agent is unreachable: %1</source>
        <translation>无法连接代理服务：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The agent refused the token (401 unauthenticated). Connect again with a valid token.</source>
        <translation>代理服务拒绝了令牌（401 未认证）。请使用有效令牌重新连接。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The agent refuses this address for now (429): %1. Connect again with a valid token once the wait is over.</source>
        <translation>代理服务暂时拒绝此地址（429）：%1。等待结束后请使用有效令牌重新连接。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Your token&apos;s role is too low (403 forbidden): this needs the role %1.</source>
        <translation>您的令牌角色权限不足（403 禁止）：此操作需要角色 %1。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Your token&apos;s role is too low (403 forbidden): %1</source>
        <translation>您的令牌角色权限不足（403 禁止）：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Four-eyes rule: whoever proposed a compensation cannot decide it. Another approver must approve or reject it.</source>
        <translation>四眼原则：补偿的提议人不能自行审批。必须由另一位审批人批准或驳回。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The agent refused (%1 %2): %3</source>
        <translation>代理服务拒绝了请求（%1 %2）：%3</translation>
    </message>
</context>
<context>
    <name>BreakerState</name>
    <message>
        <location filename="../console/models/codelabels.cpp" line="+39"/>
        <source>closed</source>
        <translation>闭合</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>open</source>
        <translation>熔断</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>half_open</source>
        <translation>半开</translation>
    </message>
</context>
<context>
    <name>CallbackMode</name>
    <message>
        <location line="-6"/>
        <source>normal</source>
        <translation>正常</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>accept_only</source>
        <translation>仅接收</translation>
    </message>
</context>
<context>
    <name>CompensationStatus</name>
    <message>
        <location line="-6"/>
        <source>proposed</source>
        <translation>待审批</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>approved</source>
        <translation>已批准</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>rejected</source>
        <translation>已驳回</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>executed</source>
        <translation>已执行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>failed</source>
        <translation>执行失败</translation>
    </message>
</context>
<context>
    <name>FindingKind</name>
    <message>
        <location line="+13"/>
        <source>effect_mismatch</source>
        <translation>副作用不一致</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>missing_outbox</source>
        <translation>缺少发件箱事件</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>stuck_paying</source>
        <translation>卡在支付中</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>stuck_accepted</source>
        <translation>卡在已接收</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>amount_mismatch</source>
        <translation>金额不一致</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>double_payment</source>
        <translation>重复支付</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>oversold</source>
        <translation>超卖</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>refund_failed</source>
        <translation>退款失败</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>refund_abnormal</source>
        <translation>退款异常</translation>
    </message>
</context>
<context>
    <name>Layer</name>
    <message>
        <location line="-35"/>
        <source>none</source>
        <translation>未重复</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>idempotency_key</source>
        <translation>幂等键</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>token</source>
        <translation>一次性令牌</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>lock</source>
        <translation>分布式锁</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>unique_index</source>
        <translation>唯一索引</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>state_machine</source>
        <translation>状态机</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>side_effect</source>
        <translation>副作用键</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>rejected</source>
        <translation>已拒绝</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../console/models/refundsmodel.cpp" line="+78"/>
        <source>Which order? Type its order_no.</source>
        <translation>哪个订单？请输入订单号（order_no）。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Say why: the reason goes into the audit trail.</source>
        <translation>请说明原因：原因会记入审计日志。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>The amount must be positive, like 20.00.</source>
        <translation>金额必须为正数，例如 20.00。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Items go back with an amount: say how much is refunded for them.</source>
        <translation>退回商品时需填写金额：请说明为这些商品退款多少。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>&quot;%1&quot; is not an item: write SKU x quantity, e.g. SKU-1 x2.</source>
        <translation>“%1”不是有效的商品：请按“SKU x 数量”填写，例如 SKU-1 x2。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The quantity of %1 must be at least 1.</source>
        <translation>%1 的数量至少为 1。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 is named twice.</source>
        <translation>%1 重复填写了两次。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>a refund of what is left</source>
        <translation>退还剩余金额</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a refund of %1</source>
        <translation>退款 %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> with %1</source>
        <translation>，附带 %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1%2 of %3</source>
        <translation>%1%2（共 %3）</translation>
    </message>
    <message>
        <location filename="../console/views/callbacksview.cpp" line="+25"/>
        <source>outcome %1, decided by the layer %2</source>
        <translation>结果 %1，由防线 %2 判定</translation>
    </message>
    <message>
        <location line="+5"/>
        <source> (%1)</source>
        <translation>（%1）</translation>
    </message>
</context>
<context>
    <name>ScenarioKind</name>
    <message>
        <location filename="../console/models/codelabels.cpp" line="+3"/>
        <source>mixed</source>
        <translation>混合</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>retry_storm</source>
        <translation>重试风暴</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>concurrent_burst</source>
        <translation>并发突发</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>gateway_replay</source>
        <translation>网关超时重放</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>mq_redelivery</source>
        <translation>消息队列重投</translation>
    </message>
</context>
<context>
    <name>ScenarioPhase</name>
    <message>
        <location line="+3"/>
        <source>setup</source>
        <translation>准备中</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>settling</source>
        <translation>结算中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>passed</source>
        <translation>通过</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>failed</source>
        <translation>未通过</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>error</source>
        <translation>出错</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>abandoned</source>
        <translation>已放弃</translation>
    </message>
</context>
<context>
    <name>ScenarioText</name>
    <message>
        <location filename="../console/models/scenariotext.cpp" line="+34"/>
        <source>double effect</source>
        <translation>重复副作用</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>double effects</source>
        <translation>重复副作用</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>missing effect</source>
        <translation>缺失副作用</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>missing effects</source>
        <translation>缺失副作用</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>lost order</source>
        <translation>丢失订单</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>lost orders</source>
        <translation>丢失订单</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 of %2 orders paid exactly once</source>
        <translation>%2 个订单中有 %1 个恰好支付一次</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PASS</source>
        <translation>通过</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>FAIL</source>
        <translation>失败</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 orders, %2 callback deliveries, %3 paid exactly once, %4, %5 missing effects, %6 lost, %7 order.paid events still pending</source>
        <translation>%1 个订单，%2 次回调投递，%3 个恰好支付一次，%4，%5 个缺失副作用，%6 个丢失，%7 个 order.paid 事件仍待投递</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>starting</source>
        <translation>启动中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1: %2 of %3 orders paid at the platform, %4 confirmed, %5 created</source>
        <translation>%1：平台已支付 %2/%3 个订单，已确认 %4 个，已创建 %5 个</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>(unnamed)</source>
        <translation>（未命名）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>an unknown time</source>
        <translation>未知时间</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ABANDONED — agent %1 stopped renewing its lease, which ended at %2</source>
        <translation>已放弃 — 代理服务 %1 停止续租，租约于 %2 结束</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <location filename="../console/app/main.cpp" line="+30"/>
        <source>The payonce operations console</source>
        <translation>payonce 运维控制台</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The agent&apos;s URL, e.g. http://127.0.0.1:8080</source>
        <translation>代理服务的地址，例如 http://127.0.0.1:8080</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Save a PNG of each main view into DIR, then quit (needs --url and PAYONCE_CONSOLE_TOKEN)</source>
        <translation>将每个主视图保存为 PNG 到 DIR 后退出（需要 --url 和 PAYONCE_CONSOLE_TOKEN）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>With --screenshot: the order the callbacks view shows</source>
        <translation>配合 --screenshot：回调视图显示的订单</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>With --screenshot: the idempotency key the keys view shows</source>
        <translation>配合 --screenshot：幂等键视图显示的键</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>With --screenshot: seconds of live data first (default 20)</source>
        <translation>配合 --screenshot：先接收多少秒实时数据（默认 20）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The language: en or zh_CN (default: View → Language, else the system&apos;s)</source>
        <translation>界面语言：en 或 zh_CN（默认：视图 → 语言，否则跟随系统）</translation>
    </message>
</context>
<context>
    <name>payonce::console::AuditModel</name>
    <message>
        <location filename="../console/models/auditmodel.cpp" line="+6"/>
        <source>When (UTC)</source>
        <translation>时间（UTC）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Actor</source>
        <translation>操作人</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Target</source>
        <translation>对象</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Before</source>
        <translation>变更前</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>After</source>
        <translation>变更后</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Trace</source>
        <translation>追踪</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Id</source>
        <translation>编号</translation>
    </message>
</context>
<context>
    <name>payonce::console::AuditView</name>
    <message>
        <location filename="../console/views/auditview.cpp" line="+58"/>
        <source>any actor</source>
        <translation>任意操作人</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>any action</source>
        <translation>任意操作</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>From</source>
        <translation>起始</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Until</source>
        <translation>截止</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>part of a target (order, pay_no, breaker, …)</source>
        <translation>对象的一部分（订单、支付单号、熔断器……）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Fetch</source>
        <translation>查询</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Actor</source>
        <translation>操作人</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Target</source>
        <translation>对象</translation>
    </message>
    <message>
        <location line="+45"/>
        <location line="+8"/>
        <source>%1 of %2 lines shown</source>
        <translation>显示 %1 行，共 %2 行</translation>
    </message>
</context>
<context>
    <name>payonce::console::BreakersModel</name>
    <message>
        <location filename="../console/models/breakersmodel.cpp" line="+9"/>
        <source>Breaker</source>
        <translation>熔断器</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Failure rate</source>
        <translation>失败率</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Calls</source>
        <translation>调用次数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Set by</source>
        <translation>设置人</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Expires</source>
        <translation>到期</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Changed</source>
        <translation>变更时间</translation>
    </message>
</context>
<context>
    <name>payonce::console::BreakersView</name>
    <message>
        <location filename="../console/views/breakersview.cpp" line="+31"/>
        <source>Force open…</source>
        <translation>强制熔断…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Force closed…</source>
        <translation>强制闭合…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Auto…</source>
        <translation>自动…</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>%1 set %2 to %3: %4</source>
        <translation>%1 将 %2 设为 %3：%4</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Select a breaker first.</source>
        <translation>请先选择一个熔断器。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 becomes %2 on every agent until the expiry, then returns to auto.</source>
        <translation>%1 在所有代理服务上变为 %2，直到到期后恢复自动。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 returns to automatic operation on every agent.</source>
        <translation>%1 在所有代理服务上恢复自动运行。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Setting %1 to %2…</source>
        <translation>正在将 %1 设为 %2…</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>%1 is now %2 (%3).</source>
        <translation>%1 现在为 %2（%3）。</translation>
    </message>
</context>
<context>
    <name>payonce::console::CallbackDeliveriesModel</name>
    <message>
        <location filename="../console/models/callbackdeliveriesmodel.cpp" line="+8"/>
        <source>Received</source>
        <translation>接收时间</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Channel</source>
        <translation>渠道</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pay_no</source>
        <translation>支付单号</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>order_no</source>
        <translation>订单号</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Verified</source>
        <translation>验签</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Deciding layer</source>
        <translation>判定防线</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>HTTP</source>
        <translation>HTTP</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Outcome</source>
        <translation>结果</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Agent</source>
        <translation>代理服务</translation>
    </message>
</context>
<context>
    <name>payonce::console::CallbacksView</name>
    <message>
        <location filename="../console/views/callbacksview.cpp" line="+14"/>
        <source>Replay…</source>
        <translation>重放…</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>pay_no or order_no</source>
        <translation>支付单号或订单号</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Run the selected delivery&apos;s stored callback through the pipeline again</source>
        <translation>将所选投递的已存回调重新走一遍处理流程</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Type a pay_no or an order_no.</source>
        <translation>请输入支付单号或订单号。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Searching…</source>
        <translation>搜索中…</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>%1 %2: %3</source>
        <translation>%1 %2：%3</translation>
    </message>
    <message numerus="yes">
        <location line="+4"/>
        <source>%n delivery(s). Callback log: %1</source>
        <translation>
            <numerusform>%n 次投递。回调日志：%1</numerusform>
        </translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no row</source>
        <translation>无记录</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Select a delivery with a pay_no to replay.</source>
        <translation>请选择一条带支付单号的投递进行重放。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Replay %1</source>
        <translation>重放 %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The stored %1 callback of %2 runs through the whole pipeline again. A dry run shows first what it would do.</source>
        <translation>%2 的已存 %1 回调将重新走完整个处理流程。会先演练一次，显示它将做什么。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Dry run of %1…</source>
        <translation>正在演练 %1…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Replaying %1…</source>
        <translation>正在重放 %1…</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Replayed %1: %2.</source>
        <translation>已重放 %1：%2。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Dry run of %1: %2.

Rows that would change:
%3

Replay for real?</source>
        <translation>%1 的演练：%2。

将会变更的记录：
%3

确定真正重放吗？</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Dry run of %1: %2.</source>
        <translation>%1 的演练：%2。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Replay %1?</source>
        <translation>重放 %1？</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Replay</source>
        <translation>重放</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Replay of %1 cancelled after the dry run.</source>
        <translation>演练后已取消 %1 的重放。</translation>
    </message>
</context>
<context>
    <name>payonce::console::CompensationsModel</name>
    <message>
        <location filename="../console/models/compensationsmodel.cpp" line="+8"/>
        <source>Id</source>
        <translation>编号</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>order_no</source>
        <translation>订单号</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Proposed by</source>
        <translation>提议人</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Why proposed</source>
        <translation>提议原因</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Decided by</source>
        <translation>审批人</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Why decided</source>
        <translation>审批原因</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Effect</source>
        <translation>执行结果</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Proposed at</source>
        <translation>提议时间</translation>
    </message>
</context>
<context>
    <name>payonce::console::CompensationsView</name>
    <message>
        <location filename="../console/views/compensationsview.cpp" line="+38"/>
        <source>proposed (the queue)</source>
        <translation>待审批（队列）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Approve…</source>
        <translation>批准…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Reject…</source>
        <translation>驳回…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Open findings</source>
        <translation>未关闭的异常发现</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compensations</source>
        <translation>补偿</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>Select a compensation first.</source>
        <translation>请先选择一条补偿。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>compensation %1 (%2 for %3, proposed by %4: %5)</source>
        <translation>补偿 %1（%3 的 %2，由 %4 提议：%5）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Approving executes %1 once.</source>
        <translation>批准后将执行 %1 一次。</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Rejecting closes %1.</source>
        <translation>驳回后将关闭 %1。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Approve %1</source>
        <translation>批准 %1</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Reject %1</source>
        <translation>驳回 %1</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Sending the decision on %1…</source>
        <translation>正在提交对 %1 的审批…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Compensation %1 was not decided. Four-eyes rule: you proposed it, so you cannot approve or reject it yourself — another approver must decide it.</source>
        <translation>补偿 %1 未被审批。四眼原则：您是提议人，不能自行批准或驳回 — 必须由另一位审批人决定。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Compensation %1 is %2. Effect: %3</source>
        <translation>补偿 %1：%2。执行结果：%3</translation>
    </message>
</context>
<context>
    <name>payonce::console::ConnectionDialog</name>
    <message>
        <location filename="../console/app/connectiondialog.cpp" line="+25"/>
        <source>Connect to a payonce agent</source>
        <translation>连接到 payonce 代理服务</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>bearer token (not stored)</source>
        <translation>持有者令牌（不会保存）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Agent URL</source>
        <translation>代理服务地址</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Token</source>
        <translation>令牌</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Connect</source>
        <translation>连接</translation>
    </message>
</context>
<context>
    <name>payonce::console::DashboardView</name>
    <message>
        <location filename="../console/views/dashboardview.cpp" line="+46"/>
        <source>Requests</source>
        <translation>请求数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>p50</source>
        <translation>p50</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>p99</source>
        <translation>p99</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Outbox pending</source>
        <translation>发件箱待投递</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Outbox dead</source>
        <translation>发件箱死信</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Redis</source>
        <translation>Redis</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Breakers</source>
        <translation>熔断器</translation>
    </message>
    <message>
        <location line="+68"/>
        <source>degraded</source>
        <translation>降级</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ok</source>
        <translation>正常</translation>
    </message>
</context>
<context>
    <name>payonce::console::FencingTokensModel</name>
    <message>
        <location filename="../console/models/locksmodel.cpp" line="+100"/>
        <source>Order</source>
        <translation>订单</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Last fencing token</source>
        <translation>最新围栏令牌</translation>
    </message>
</context>
<context>
    <name>payonce::console::FindingsModel</name>
    <message>
        <location filename="../console/models/findingsmodel.cpp" line="+6"/>
        <source>Id</source>
        <translation>编号</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>order_no</source>
        <translation>订单号</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pay_no</source>
        <translation>支付单号</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Evidence</source>
        <translation>证据</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Seen</source>
        <translation>发现次数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>First seen</source>
        <translation>首次发现</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Last seen</source>
        <translation>最近发现</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
</context>
<context>
    <name>payonce::console::IdempotencyRecordModel</name>
    <message>
        <location filename="../console/models/idempotencyrecordmodel.cpp" line="+8"/>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Locked at</source>
        <translation>加锁时间</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Created</source>
        <translation>创建时间</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Completed</source>
        <translation>完成时间</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fingerprint</source>
        <translation>指纹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stored response</source>
        <translation>已存响应</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Look a key up first.</source>
        <translation>请先查询一个键。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The record is completed: its stored response answers every retry, nothing to unlock.</source>
        <translation>该记录已完成：已存响应会应答每次重试，无需解锁。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The agent reported the status &quot;%1&quot;: only an in_flight record can be unlocked.</source>
        <translation>代理服务报告的状态为“%1”：只有处理中（in_flight）的记录可以解锁。</translation>
    </message>
</context>
<context>
    <name>payonce::console::IncidentView</name>
    <message>
        <location filename="../console/views/incidentview.cpp" line="+43"/>
        <source>Accept-only ON…</source>
        <translation>开启仅接收模式…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Accept-only OFF (drain)…</source>
        <translation>关闭仅接收模式（排空）…</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>%p % drained</source>
        <translation>已排空 %p %</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Callback processing</source>
        <translation>回调处理</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Accepted rows waiting</source>
        <translation>待处理的已接收记录</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Drain</source>
        <translation>排空</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Set by</source>
        <translation>设置人</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Accept-only: every agent verifies, records and acknowledges each gateway callback but processes none — for an incident downstream (database, points, coupons). Switching it off lets the worker drain the accepted rows through all five layers.</source>
        <translation>仅接收模式：所有代理服务对每个网关回调进行验签、记录并应答，但不做处理 — 用于下游故障（数据库、积分、优惠券）。关闭后，工作线程会让已接收的记录依次通过全部五道防线排空。</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>ACCEPT-ONLY</source>
        <translation>仅接收</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>waiting for accept-only to end</source>
        <translation>等待仅接收模式结束</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 of %2 processed (%p %)</source>
        <translation>已处理 %1/%2（%p %）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 at %2: %3</source>
        <translation>%1 于 %2：%3</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>%1 set callbacks to %2: %3</source>
        <translation>%1 将回调设为 %2：%3</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Every agent keeps acknowledging callbacks but only records them as accepted rows; no order is marked paid and no points or coupons are granted until accept-only is switched off.</source>
        <translation>所有代理服务继续应答回调，但只将其记录为已接收；在关闭仅接收模式之前，不会将订单标记为已支付，也不会发放积分或优惠券。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Every agent processes callbacks again, and the %1 accepted rows waiting are drained through all five layers.</source>
        <translation>所有代理服务恢复处理回调，%1 条待处理的已接收记录将依次通过全部五道防线排空。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Accept-only ON</source>
        <translation>开启仅接收模式</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Accept-only OFF</source>
        <translation>关闭仅接收模式</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Setting callbacks to %1…</source>
        <translation>正在将回调设为 %1…</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Callbacks are now %1.</source>
        <translation>回调现在为 %1。</translation>
    </message>
</context>
<context>
    <name>payonce::console::KeyStoreBanner</name>
    <message>
        <location filename="../console/views/keystorebanner.cpp" line="+48"/>
        <source>Key store: embedded (this agent only)</source>
        <translation>键存储：内嵌（仅本代理服务）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Key store: Redis via Sentinel, master %1</source>
        <translation>键存储：经 Sentinel 的 Redis，主节点 %1</translation>
    </message>
    <message>
        <location line="+0"/>
        <location line="+2"/>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Key store: Redis Cluster, masters %1</source>
        <translation>键存储：Redis Cluster，主节点 %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Key store: Redis at %1</source>
        <translation>键存储：Redis %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>, fence epoch %1</source>
        <translation>，围栏纪元 %1</translation>
    </message>
    <message numerus="yes">
        <location line="+3"/>
        <source>, %n master switch(es) since the agent started</source>
        <translation>
            <numerusform>，代理服务启动以来主节点切换 %n 次</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source> — UNREACHABLE: payments go on without locks (database layers only)</source>
        <translation> — 无法连接：支付在无分布式锁的情况下继续（仅数据库防线）</translation>
    </message>
</context>
<context>
    <name>payonce::console::KeysView</name>
    <message>
        <location filename="../console/views/keysview.cpp" line="+29"/>
        <source>Unlock…</source>
        <translation>解锁…</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>user_id</source>
        <translation>用户编号</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Idempotency-Key (the order_no for payments)</source>
        <translation>幂等键 Idempotency-Key（支付时为订单号）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Look up</source>
        <translation>查询</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>Looking up %1 / %2…</source>
        <translation>正在查询 %1 / %2…</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>No record for user %1 and key %2 (none, or released).</source>
        <translation>用户 %1、键 %2 没有记录（不存在或已释放）。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Record of user %1, key %2: %3.</source>
        <translation>用户 %1、键 %2 的记录：%3。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>The agent refused: %1</source>
        <translation>代理服务拒绝了请求：%1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>In flight: the agent releases it only past its lock timeout (a request that died holding it); a live request keeps it.</source>
        <translation>处理中：只有超过加锁超时（持有它的请求已中断）后代理服务才会释放；仍在进行的请求会一直持有。</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Unlock %1 / %2</source>
        <translation>解锁 %1 / %2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The in_flight record of user %1, key %2 (locked at %3) is deleted, so the client&apos;s next retry with this key is processed afresh. The agent refuses if it is not past its lock timeout.</source>
        <translation>用户 %1、键 %2 处理中的记录（加锁于 %3）将被删除，客户端下次用此键重试时将重新处理。如果尚未超过加锁超时，代理服务会拒绝。</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Unlocking %1 / %2…</source>
        <translation>正在解锁 %1 / %2…</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Unlocked %1 / %2: the record is released.</source>
        <translation>已解锁 %1 / %2：记录已释放。</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Unlocked %1 / %2: released — the agent has no record of it now.</source>
        <translation>已解锁 %1 / %2：已释放 — 代理服务现在没有它的记录。</translation>
    </message>
</context>
<context>
    <name>payonce::console::LayerTotalsModel</name>
    <message>
        <location filename="../console/models/layertotalsmodel.cpp" line="+78"/>
        <source>Layer</source>
        <translation>防线</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Total</source>
        <translation>合计</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Per second</source>
        <translation>每秒</translation>
    </message>
</context>
<context>
    <name>payonce::console::LocksModel</name>
    <message>
        <location filename="../console/models/locksmodel.cpp" line="-91"/>
        <source>Lock</source>
        <translation>锁</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Order</source>
        <translation>订单</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fencing token</source>
        <translation>围栏令牌</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Owner</source>
        <translation>持有者</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Acquired</source>
        <translation>获取时间</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>TTL left (ms)</source>
        <translation>剩余 TTL（毫秒）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Renewals</source>
        <translation>续期次数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Lost because</source>
        <translation>丢失原因</translation>
    </message>
</context>
<context>
    <name>payonce::console::LocksView</name>
    <message>
        <location filename="../console/views/locksview.cpp" line="+43"/>
        <source>Not scanned yet.</source>
        <translation>尚未扫描。</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Writes refused for a stale fencing token (agent total):</source>
        <translation>因过期围栏令牌被拒绝的写入（代理服务合计）：</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Last fencing token per order</source>
        <translation>每个订单的最新围栏令牌</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stale-token refusals seen live</source>
        <translation>实时收到的过期令牌拒绝</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Scan the key store</source>
        <translation>扫描键存储</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Every lock the key store holds, any agent&apos;s, on every node: a lock that never expires blocks its payment for ever</source>
        <translation>键存储中每个节点上的所有锁（任何代理服务的）：永不过期的锁会永远阻塞它的支付</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Pay locks held and recently lost</source>
        <translation>持有中和最近丢失的支付锁</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Locks in the key store, every node (the key inspector)</source>
        <translation>键存储中的锁，所有节点（键检查器）</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Scanning…</source>
        <translation>正在扫描…</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The scan failed: %1</source>
        <translation>扫描失败：%1</translation>
    </message>
    <message numerus="yes">
        <location line="+8"/>
        <source>%n node(s) scanned</source>
        <translation>
            <numerusform>已扫描 %n 个节点</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+0"/>
        <source>, %n lock(s)</source>
        <translation>
            <numerusform>，%n 个锁</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>, %n stuck</source>
        <translation>
            <numerusform>，%n 个卡住</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source> (the first 1000 only)</source>
        <translation>（仅前 1000 个）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>. Not scanned: %1</source>
        <translation>。未扫描：%1</translation>
    </message>
</context>
<context>
    <name>payonce::console::MainWindow</name>
    <message>
        <location filename="../console/app/mainwindow.cpp" line="+50"/>
        <source>payonce console</source>
        <translation>payonce 控制台</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>&amp;Dashboard</source>
        <translation>总览(&amp;D)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Callbacks</source>
        <translation>回调(&amp;C)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Breakers</source>
        <translation>熔断器(&amp;B)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Co&amp;mpensations</source>
        <translation>补偿(&amp;M)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;QA</source>
        <translation>&amp;QA</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Audit</source>
        <translation>审计(&amp;A)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Keys</source>
        <translation>幂等键(&amp;K)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Locks</source>
        <translation>锁(&amp;L)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Outbox</source>
        <translation>发件箱(&amp;O)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Incident</source>
        <translation>故障处置(&amp;I)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Re&amp;funds</source>
        <translation>退款(&amp;F)</translation>
    </message>
    <message>
        <location line="+7"/>
        <location line="+170"/>
        <source>Not connected</source>
        <translation>未连接</translation>
    </message>
    <message>
        <location line="-125"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Connect…</source>
        <translation>连接(&amp;C)…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Save chart as PNG…</source>
        <translation>将图表保存为 PNG(&amp;S)…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>&amp;Wall screen</source>
        <translation>大屏(&amp;W)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Refresh</source>
        <translation>刷新(&amp;R)</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Language: %1, from the next start of the console</source>
        <translation>语言：%1，控制台下次启动时生效</translation>
    </message>
    <message>
        <location line="+12"/>
        <location line="+67"/>
        <source>Connecting to %1…</source>
        <translation>正在连接 %1…</translation>
    </message>
    <message>
        <location line="-42"/>
        <source>Save chart</source>
        <translation>保存图表</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PNG images (*.png)</source>
        <translation>PNG 图片 (*.png)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Save failed</source>
        <translation>保存失败</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Could not write %1.</source>
        <translation>无法写入 %1。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>New finding: %1 for %2 — see Compensations</source>
        <translation>新的异常发现：%2 的%1 — 请查看“补偿”</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Money at risk: %1</source>
        <translation>资金风险：%1</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Live: %1</source>
        <translation>实时：%1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Stream lost: reconnecting to %1 in %2 s</source>
        <translation>数据流中断：%2 秒后重新连接 %1</translation>
    </message>
</context>
<context>
    <name>payonce::console::OrderRefundsView</name>
    <message>
        <location filename="../console/views/orderrefundsview.cpp" line="+34"/>
        <source>order_no</source>
        <translation>订单号</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Show refunds</source>
        <translation>查看退款</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>20.00 — empty: what is left of the payment</source>
        <translation>20.00 — 留空：退还该笔支付的剩余金额</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>SKU-1 x1, SKU-2 x2 — empty: no items go back</source>
        <translation>SKU-1 x1, SKU-2 x2 — 留空：不退回商品</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Propose refund…</source>
        <translation>提议退款…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A refund compensation: another person approves it before any money moves</source>
        <translation>退款补偿：资金变动前须由另一人批准</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Items returned</source>
        <translation>退回商品</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Type an order_no.</source>
        <translation>请输入订单号。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Loading…</source>
        <translation>加载中…</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Propose a refund</source>
        <translation>提议退款</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Propose %1. Another person approves it in Compensations before the platform is asked.</source>
        <translation>提议%1。在向支付平台发起之前，须由另一人在“补偿”中批准。</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Proposing %1…</source>
        <translation>正在提议%1…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Refused: %1</source>
        <translation>已拒绝：%1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Proposed %1 as compensation %2: waiting for a second person&apos;s approval.</source>
        <translation>已将%1提议为补偿 %2：等待另一人批准。</translation>
    </message>
</context>
<context>
    <name>payonce::console::OutboxModel</name>
    <message>
        <location filename="../console/models/outboxmodel.cpp" line="+8"/>
        <source>Id</source>
        <translation>编号</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Re-driven</source>
        <translation>已重投</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Event</source>
        <translation>事件</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Order</source>
        <translation>订单</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Attempts</source>
        <translation>尝试次数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Last error</source>
        <translation>最近错误</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Next attempt</source>
        <translation>下次尝试</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Created</source>
        <translation>创建时间</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Delivered</source>
        <translation>已投递</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Event id</source>
        <translation>事件编号</translation>
    </message>
</context>
<context>
    <name>payonce::console::OutboxView</name>
    <message>
        <location filename="../console/views/outboxview.cpp" line="+48"/>
        <source>Re-drive…</source>
        <translation>重新投递…</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Dead, pending and re-driven</source>
        <translation>死信、待投递和已重投</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Dead</source>
        <translation>死信</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pending</source>
        <translation>待投递</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Delivered</source>
        <translation>已投递</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Show</source>
        <translation>显示</translation>
    </message>
    <message>
        <location line="+82"/>
        <source>Select a dead event to re-drive it.</source>
        <translation>请选择一条死信事件进行重新投递。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Event %1 is %2: only a dead event can be re-driven.</source>
        <translation>事件 %1 的状态为 %2：只有死信事件可以重新投递。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Event %1 goes back to pending with fresh attempts.</source>
        <translation>事件 %1 将回到待投递状态，尝试次数重新计算。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Re-drive event %1</source>
        <translation>重新投递事件 %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 for %2 went dead after %3 attempts (last error: %4). It goes back to pending with fresh attempts and is delivered again with the same Idempotency-Key.</source>
        <translation>%2 的 %1 在尝试 %3 次后成为死信（最近错误：%4）。它将回到待投递状态并重新计算尝试次数，以相同的 Idempotency-Key 再次投递。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Re-driving event %1…</source>
        <translation>正在重新投递事件 %1…</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Event %1 re-driven: now %2, attempts %3.</source>
        <translation>事件 %1 已重新投递：当前 %2，尝试 %3 次。</translation>
    </message>
</context>
<context>
    <name>payonce::console::QaRunsModel</name>
    <message>
        <location filename="../console/models/qarunsmodel.cpp" line="+10"/>
        <source>Scenario</source>
        <translation>场景</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Phase</source>
        <translation>阶段</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Orders</source>
        <translation>订单数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Duplicates</source>
        <translation>重复次数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Concurrency</source>
        <translation>并发数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Layers off</source>
        <translation>关闭的防线</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Started by</source>
        <translation>发起人</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Agent</source>
        <translation>代理服务</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Started</source>
        <translation>开始时间</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Finished</source>
        <translation>结束时间</translation>
    </message>
</context>
<context>
    <name>payonce::console::QaView</name>
    <message>
        <location filename="../console/views/qaview.cpp" line="+60"/>
        <source>Past runs (select one for its report)</source>
        <translation>历史运行（选择一条查看报告）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Start a scenario</source>
        <translation>启动场景</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>The platform&apos;s retry schedule (15 s, 15 s, 30 s, 3 min, …) multiplied by this</source>
        <translation>支付平台的重试间隔（15 秒、15 秒、30 秒、3 分钟……）乘以此倍数</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the connected agent</source>
        <translation>当前连接的代理服务</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Agent URLs separated by commas; the scenario&apos;s requests are spread over them</source>
        <translation>用逗号分隔的代理服务地址；场景的请求会分散到这些地址</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Why (ticket, release, …) — recorded in the audit log</source>
        <translation>原因（工单、版本……）— 记入审计日志</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Start scenario</source>
        <translation>启动场景</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Orders</source>
        <translation>订单数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Duplicates</source>
        <translation>重复次数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Concurrency</source>
        <translation>并发数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Time scale</source>
        <translation>时间倍率</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Target agents</source>
        <translation>目标代理服务</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Switch off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Scenario</source>
        <translation>场景</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>No scenario yet.</source>
        <translation>暂无场景。</translation>
    </message>
    <message>
        <location line="+78"/>
        <source>Type a reason first.</source>
        <translation>请先填写原因。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Starting %1…</source>
        <translation>正在启动 %1…</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Started %1.</source>
        <translation>已启动 %1。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1: starting</source>
        <translation>%1：启动中</translation>
    </message>
    <message>
        <location line="+62"/>
        <source>No report: the run ended with its agent.</source>
        <translation>无报告：运行随其代理服务一同结束。</translation>
    </message>
</context>
<context>
    <name>payonce::console::RateChart</name>
    <message>
        <location filename="../console/views/ratechart.cpp" line="+35"/>
        <source>time (UTC)</source>
        <translation>时间（UTC）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>caught per second</source>
        <translation>每秒拦截数</translation>
    </message>
</context>
<context>
    <name>payonce::console::ReasonDialog</name>
    <message>
        <location filename="../console/views/reasondialog.cpp" line="+23"/>
        <source>Why (ticket, incident, …) — recorded in the audit log</source>
        <translation>原因（工单、故障……）— 记入审计日志</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location line="+6"/>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Expires after</source>
        <translation>有效期</translation>
    </message>
</context>
<context>
    <name>payonce::console::RefundsModel</name>
    <message>
        <location filename="../console/models/refundsmodel.cpp" line="-108"/>
        <source>Refund</source>
        <translation>退款</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Amount</source>
        <translation>金额</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Partial</source>
        <translation>部分退款</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Items back</source>
        <translation>退回商品</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Channel</source>
        <translation>渠道</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pay_no</source>
        <translation>支付单号</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Own payment</source>
        <translation>原支付</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Attempts</source>
        <translation>尝试次数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Last error</source>
        <translation>最近错误</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Updated</source>
        <translation>更新时间</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>No refund yet.</source>
        <translation>暂无退款。</translation>
    </message>
    <message numerus="yes">
        <location line="+2"/>
        <source>%n refund(s): %1 given back</source>
        <translation>
            <numerusform>%n 笔退款：已退回 %1</numerusform>
        </translation>
    </message>
    <message>
        <location line="+2"/>
        <source>, %1 in flight</source>
        <translation>，%1 处理中</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>, %1 failed (nothing went back)</source>
        <translation>，%1 失败（未退回任何款项）</translation>
    </message>
</context>
<context>
    <name>payonce::console::ScenarioReportModel</name>
    <message>
        <location filename="../console/models/scenarioreportmodel.cpp" line="+97"/>
        <source>Layer</source>
        <translation>防线</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Callbacks caught</source>
        <translation>拦截的回调</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Confirms answered</source>
        <translation>应答的确认请求</translation>
    </message>
</context>
<context>
    <name>payonce::console::ScenarioRequest</name>
    <message>
        <location filename="../console/models/scenariorequest.cpp" line="+54"/>
        <source>%1: %2 orders, %3 duplicates each, %4 at once, time ×%5, against %6; </source>
        <translation>%1：%2 个订单，每个重复 %3 次，并发 %4，时间 ×%5，目标 %6；</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>the connected agent</source>
        <translation>当前连接的代理服务</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>every layer on</source>
        <translation>全部防线开启</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>switched off for its orders: %1</source>
        <translation>对其订单关闭：%1</translation>
    </message>
</context>
<context>
    <name>payonce::console::StaleRefusalsModel</name>
    <message>
        <location filename="../console/models/locksmodel.cpp" line="+88"/>
        <source>At</source>
        <translation>时间</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Order</source>
        <translation>订单</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pay_no</source>
        <translation>支付单号</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stale token</source>
        <translation>过期令牌</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Refused by</source>
        <translation>拒绝方</translation>
    </message>
</context>
<context>
    <name>payonce::console::StoredLocksModel</name>
    <message>
        <location line="-48"/>
        <source>Lock</source>
        <translation>锁</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Node</source>
        <translation>节点</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Owner</source>
        <translation>持有者</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>TTL left (ms)</source>
        <translation>剩余 TTL（毫秒）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Held by this agent</source>
        <translation>由本代理服务持有</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stuck</source>
        <translation>卡住</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>never expires</source>
        <translation>永不过期</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>expires later than any lock of ours</source>
        <translation>过期时间晚于我们的任何锁</translation>
    </message>
</context>
<context>
    <name>payonce::console::TablePanel</name>
    <message>
        <location filename="../console/views/tablepanel.cpp" line="+45"/>
        <source>Filter…</source>
        <translation>筛选…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Export CSV…</source>
        <translation>导出 CSV…</translation>
    </message>
    <message>
        <location line="+52"/>
        <source>Export table as CSV</source>
        <translation>将表格导出为 CSV</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Export failed</source>
        <translation>导出失败</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Could not write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
</context>
<context>
    <name>payonce::console::WallScreen</name>
    <message>
        <location filename="../console/views/wallscreen.cpp" line="+40"/>
        <source>payonce — wall screen</source>
        <translation>payonce — 大屏</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>requests</source>
        <translation>请求数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>p99</source>
        <translation>p99</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>duplicates caught</source>
        <translation>拦截的重复请求</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>F11 or Esc leaves</source>
        <translation>按 F11 或 Esc 退出</translation>
    </message>
</context>
<context>
    <name>payonce::console::language</name>
    <message>
        <location filename="../console/app/language.cpp" line="+20"/>
        <source>System language</source>
        <translation>跟随系统</translation>
    </message>
</context>
</TS>
