//===- CallPlanExpect.h - A plan checked against its description -*- C++
//-*-===//
//
// For the contract's and the kernels' tests of CallPlan: a plan must answer
// exactly where the description does, with the same values.
//
//===----------------------------------------------------------------------===//

#ifndef TILEC_TEST_UNIT_CONTRACT_CALLPLANEXPECT_H
#define TILEC_TEST_UNIT_CONTRACT_CALLPLANEXPECT_H

#include "tilec/contract/CallPlan.h"

#include <gtest/gtest.h>

#include <optional>

namespace tilec::test {

/// `plan`'s evaluation of `call`, after expecting that it fits, that it
/// answers where `description.evaluateCall` succeeds and only there, and
/// that it gives the same key, specialization and integer arguments.
inline std::optional<CallPlan::Evaluation>
expectPlannedAsDescribed(const KernelDescription &description,
                         const CallPlan &plan, const Call &call) {
  EXPECT_TRUE(plan.fits(call));
  auto expected = description.evaluateCall(call);
  auto planned = plan.evaluate(call);
  EXPECT_EQ(planned.has_value(), expected.ok())
      << (expected.ok() ? "" : expected.message());
  if (!planned || !expected.ok())
    return std::nullopt;
  EXPECT_EQ(planned->autotuneKey, expected->autotuneKey);
  EXPECT_EQ(planned->specialization.str(), expected->specialization.str());
  EXPECT_EQ(planned->integerArguments, expected->integerArguments);
  return planned;
}

} // namespace tilec::test

#endif // TILEC_TEST_UNIT_CONTRACT_CALLPLANEXPECT_H
