#include <gtest/gtest.h>

#include "runtime/layout.h"

namespace switchyard {
namespace {

TEST(LayoutBytes, PlainPermutedAndBlocked) {
  EXPECT_EQ(*LayoutBytes("", {2, 3, 4, 5}, DataType::kFloat), 2 * 3 * 4 * 5 * 4);
  EXPECT_EQ(*LayoutBytes("nhwc", {2, 3, 4, 5}, DataType::kFloat), 2 * 3 * 4 * 5 * 4);
  EXPECT_EQ(*LayoutBytes("nChw16c", {1, 20, 7, 7}, DataType::kFloat), 32 * 7 * 7 * 4);
  EXPECT_EQ(*LayoutBytes("nChw8c", {2, 16, 3, 3}, DataType::kBfloat16), 2 * 16 * 9 * 2);
  EXPECT_EQ(*LayoutBytes("nCdhw16c", {1, 3, 2, 2, 2}, DataType::kFloat), 16 * 8 * 4);
  EXPECT_FALSE(LayoutBytes("nChw16c", {1, 20, 7}, DataType::kFloat).ok());
  EXPECT_FALSE(LayoutBytes("nChw16", {1, 20, 7, 7}, DataType::kFloat).ok());
}

}  // namespace
}  // namespace switchyard
