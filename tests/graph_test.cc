#include <gtest/gtest.h>

#include "ir/graph.h"
#include "reference/ops/common.h"

namespace switchyard {
namespace {

TEST(Broadcast, StaticShapes) {
  Node n;
  n.name = "add";
  n.op_type = "Add";
  auto r = ops::BroadcastShapes(n, {{2, 1, 3}, {4, 1}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<int64_t>{2, 4, 3}));
  auto bad = ops::BroadcastShapes(n, {{2, 3}, {4}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'add'"), std::string::npos);
}

TEST(Broadcast, SymbolicDims) {
  Node n;
  n.name = "mul";
  auto r = ops::BroadcastDims(n, {{Dim::Symbol("N"), Dim(1)}, {Dim(1), Dim(8)}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].symbol, "N");
  EXPECT_EQ((*r)[1].value, 8);
}

TEST(Broadcast, IndexMap) {
  auto m = ops::BroadcastIndex({3, 1}, {2, 3, 2});
  EXPECT_EQ(m, (std::vector<int64_t>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
}

}  // namespace
}  // namespace switchyard
