#pragma once

#include "config/config.h"
#include "core/common/result.h"

namespace payonce::app {

/// Settings that load (every value well-formed) but must never run, refused before the
/// agent opens or writes anything, with a message that says what to change:
/// - the simulator (sim.enabled) unless the agent's and the simulator's listen addresses
///   are loopback: the agent trusts the simulator's signing key, so whoever reaches the
///   simulator can pay any order;
/// - QA scenarios (qa.enabled) unless the agent listens on loopback: they switch the
///   duplicate defences off and drive the simulator;
/// - QA scenarios without a simulator: sim.enabled, or wechat.base_url an http:// URL on a
///   loopback address (a payonce-sim beside the agent); else they would pay, notify and
///   inject faults at whatever platform wechat.base_url names;
/// - a QA peer (qa.peers) off loopback: scenarios storm their targets with duplicates;
/// - QA without its own credential: qa.token unset, or its SHA-256 not an auth.tokens
///   entry of role operator (an approver's would let QA approve four-eyes);
/// - a token of resources/payonce.example.json (example-desk-token, example-lead-token),
///   which anyone can read in the repository;
/// - a key (merchant, WeChat platform, Alipay) of the repository's test fixtures, whose
///   private halves are committed: found by the SHA-256 of the public key (DER), whatever
///   the file is called. PAYONCE_ALLOW_REPOSITORY_TEST_KEYS=1 lets a test run on them
///   (logged as a warning);
/// - a config or key file open to others (checkFilePermissions).
/// ErrorCode::Misconfigured (exit code 2).
core::Result<void> checkSafeToStart(const config::Config &config);

} // namespace payonce::app
