#include "api/server/logging.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "api/codec/json_writer.h"
#include "scheduler/base/strings.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace gpusched {
namespace {

// %J: the message as an escaped JSON string body, so a log line stays valid
// JSON whatever the message holds.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    std::string escaped;
    AppendJsonEscaped(escaped,
                      std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(escaped.data(), escaped.data() + escaped.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JsonMessageFlag>();
  }
};

}  // namespace

absl::Status ConfigureLogging(std::string_view format, int verbosity) {
  auto logger = spdlog::stderr_color_mt("gpusched");
  if (format == "json") {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(
        spdlog::pattern_time_type::utc);
    formatter->add_flag<JsonMessageFlag>('J').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%fZ","level":"%l","msg":"%J"})");
    logger->set_formatter(std::move(formatter));
  } else if (format == "text") {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--log-format must be json or text, got \"", Sv(format), "\""));
  }
  logger->set_level(verbosity <= 0   ? spdlog::level::info
                    : verbosity == 1 ? spdlog::level::debug
                                     : spdlog::level::trace);
  spdlog::set_default_logger(logger);
  return absl::OkStatus();
}

}  // namespace gpusched
