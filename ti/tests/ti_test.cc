#include <gtest/gtest.h>
TEST(Ti, Placeholder) {}
