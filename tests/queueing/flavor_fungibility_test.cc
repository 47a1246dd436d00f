// Kueue's flavorFungibility rule (queueing/flavor_fungibility.h): which
// flavor verdict is preferred, when the search stops, and what a search
// over a resource group's flavors picks. The IsPreferred table is Kueue
// v0.19.2's TestIsPreferred (pkg/scheduler/flavorassigner/
// flavorassigner_test.go), case for case.

#include "queueing/flavor_fungibility.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace gpusched {
namespace {

constexpr FlavorMode kNoFit = FlavorMode::kNoFit;
constexpr FlavorMode kNoCandidates = FlavorMode::kNoCandidates;
constexpr FlavorMode kPreempt = FlavorMode::kPreempt;
constexpr FlavorMode kReclaim = FlavorMode::kReclaim;
constexpr FlavorMode kFit = FlavorMode::kFit;

FlavorFungibility BothTryNext(std::optional<FlavorPreference> preference) {
  return {.when_can_borrow = FungibilityPolicy::kTryNextFlavor,
          .when_can_preempt = FungibilityPolicy::kTryNextFlavor,
          .preference = preference};
}

struct PreferredCase {
  std::string name;
  FlavorVerdict a;
  FlavorVerdict b;
  FlavorFungibility config;
  bool preferred;
};

class IsPreferredTest : public ::testing::TestWithParam<PreferredCase> {};

TEST_P(IsPreferredTest, RanksAsKueue) {
  const PreferredCase& c = GetParam();
  EXPECT_EQ(IsPreferred(c.a, c.b, c.config), c.preferred);
}

const PreferredCase kPreferredCases[] = {
    {"UnsetPreferenceRanksModeFirst",
     {kFit, 0},
     {kPreempt, 0},
     BothTryNext(std::nullopt),
     true},
    {"BorrowingOverPreemptionRanksModeBeforeHeight",
     {kPreempt, 1},
     {kFit, 2},
     BothTryNext(FlavorPreference::kBorrowingOverPreemption),
     false},
    {"PreemptionOverBorrowingRanksHeightFirst",
     {kPreempt, 1},
     {kFit, 2},
     BothTryNext(FlavorPreference::kPreemptionOverBorrowing),
     true},
    {"PreemptionOverBorrowingBreaksHeightTiesByMode",
     {kPreempt, 1},
     {kFit, 1},
     BothTryNext(FlavorPreference::kPreemptionOverBorrowing),
     false},
    {"NoCandidatesLosesBeforeHeightIsCompared",
     {kNoCandidates, 1},
     {kFit, 2},
     BothTryNext(FlavorPreference::kPreemptionOverBorrowing),
     false},
    {"FitBeatsShallowerNoCandidates",
     {kFit, 2},
     {kNoCandidates, 1},
     BothTryNext(FlavorPreference::kPreemptionOverBorrowing),
     true},
    {"NoCandidatesBeatsNoFit", {kNoCandidates, 1}, {kNoFit, 0}, {}, true},
    {"NoFitLosesToNoCandidates", {kNoFit, 0}, {kNoCandidates, 1}, {}, false},
    {"NoCandidatesCompareByHeight",
     {kNoCandidates, 1},
     {kNoCandidates, 2},
     {.preference = FlavorPreference::kPreemptionOverBorrowing},
     true},
    {"NoCandidatesCompareByHeightReversed",
     {kNoCandidates, 2},
     {kNoCandidates, 1},
     {.preference = FlavorPreference::kPreemptionOverBorrowing},
     false},
    // Beyond Kueue's table: reclaiming beats preempting in the own queue.
    {"ReclaimBeatsPreempt", {kReclaim, 0}, {kPreempt, 0}, {}, true},
};

INSTANTIATE_TEST_SUITE_P(
    KueueTable, IsPreferredTest, ::testing::ValuesIn(kPreferredCases),
    [](const ::testing::TestParamInfo<PreferredCase>& info) {
      return info.param.name;
    });

TEST(ShouldTryNextFlavorTest, FitWithinNominalAlwaysStops) {
  EXPECT_FALSE(ShouldTryNextFlavor({kFit, 0}, BothTryNext(std::nullopt)));
}

TEST(ShouldTryNextFlavorTest, BorrowingStopsUnderMayStopSearch) {
  EXPECT_FALSE(ShouldTryNextFlavor({kFit, 1}, {}));
}

TEST(ShouldTryNextFlavorTest, BorrowingGoesOnUnderTryNextFlavor) {
  EXPECT_TRUE(ShouldTryNextFlavor(
      {kFit, 1}, {.when_can_borrow = FungibilityPolicy::kTryNextFlavor}));
}

TEST(ShouldTryNextFlavorTest, PreemptionGoesOnByDefault) {
  EXPECT_TRUE(ShouldTryNextFlavor({kPreempt, 0}, {}));
}

TEST(ShouldTryNextFlavorTest, PreemptionStopsUnderMayStopSearch) {
  EXPECT_FALSE(ShouldTryNextFlavor(
      {kReclaim, 0}, {.when_can_preempt = FungibilityPolicy::kMayStopSearch}));
}

// A plan with victims that still borrows afterwards goes on when either
// policy says so.
TEST(ShouldTryNextFlavorTest, PreemptionWhileBorrowingFollowsWhenCanBorrow) {
  const FlavorFungibility stop_preempt_try_borrow{
      .when_can_borrow = FungibilityPolicy::kTryNextFlavor,
      .when_can_preempt = FungibilityPolicy::kMayStopSearch};
  EXPECT_TRUE(ShouldTryNextFlavor({kPreempt, 1}, stop_preempt_try_borrow));
}

TEST(ShouldTryNextFlavorTest, NoCandidatesAlwaysGoesOn) {
  EXPECT_TRUE(ShouldTryNextFlavor(
      {kNoCandidates, 0},
      {.when_can_preempt = FungibilityPolicy::kMayStopSearch}));
}

TEST(FlavorSearchTest, EveryFlavorNoFitChoosesNone) {
  const FlavorFungibility config;
  FlavorSearch search(config);
  EXPECT_FALSE(search.Offer(0, {kNoFit, 0}));
  EXPECT_FALSE(search.Offer(1, {kNoFit, 0}));
  EXPECT_FALSE(search.best().has_value());
}

TEST(FlavorSearchTest, DefaultsStopAtFirstBorrowingFit) {
  const FlavorFungibility config;
  FlavorSearch search(config);
  EXPECT_FALSE(search.Offer(0, {kPreempt, 0}));
  EXPECT_TRUE(search.Offer(1, {kFit, 1}));
  EXPECT_EQ(search.best(), 1u);
}

TEST(FlavorSearchTest, TryNextFlavorForBorrowingFindsNominalFitLater) {
  const FlavorFungibility config = BothTryNext(std::nullopt);
  FlavorSearch search(config);
  EXPECT_FALSE(search.Offer(0, {kFit, 1}));
  EXPECT_TRUE(search.Offer(1, {kFit, 0}));
  EXPECT_EQ(search.best(), 1u);
}

TEST(FlavorSearchTest, KeepsEarlierFlavorOnEqualVerdicts) {
  const FlavorFungibility config = BothTryNext(std::nullopt);
  FlavorSearch search(config);
  search.Offer(0, {kFit, 1});
  search.Offer(1, {kFit, 1});
  EXPECT_EQ(search.best(), 0u);
}

TEST(FlavorSearchTest, FitMakesPreemptionIrrelevantByDefault) {
  const FlavorFungibility config = BothTryNext(std::nullopt);
  FlavorSearch search(config);
  search.Offer(0, {kFit, 1});
  EXPECT_FALSE(search.PreemptionCouldWin());
}

TEST(FlavorSearchTest, BorrowingFitLeavesRoomForPreemptionOverBorrowing) {
  const FlavorFungibility config =
      BothTryNext(FlavorPreference::kPreemptionOverBorrowing);
  FlavorSearch search(config);
  search.Offer(0, {kFit, 1});
  EXPECT_TRUE(search.PreemptionCouldWin());
  search.Offer(1, {kPreempt, 0});
  EXPECT_EQ(search.best(), 1u);
}

}  // namespace
}  // namespace gpusched
