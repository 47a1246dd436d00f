#include "api/http/message.h"

#include <gtest/gtest.h>

namespace gpusched::http {
namespace {

TEST(JsonErrorTest, CarriesStatusMessageAndCode) {
  Response response = JsonError(404, "no such thing");
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(response.content_type, "application/json");
  EXPECT_EQ(response.body, R"({"error":"no such thing","code":404})");
}

TEST(JsonErrorTest, EscapesQuotesBackslashesAndControlCharacters) {
  Response response = JsonError(400, "bad \"x\" \\ \n\t\x01");
  EXPECT_EQ(response.body, R"({"error":"bad \"x\" \\ \n\t\u0001","code":400})");
}

TEST(JsonEscapeTest, LeavesUtf8Alone) {
  EXPECT_EQ(JsonEscape("gpu \xc3\xa9t\xc3\xa9"), "gpu \xc3\xa9t\xc3\xa9");
}

}  // namespace
}  // namespace gpusched::http
