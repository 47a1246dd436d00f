#include "api/server/dashboard_files.h"

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

constexpr std::string_view kDashboard = "/dashboard";
constexpr std::string_view kNamespaces = "/namespaces/";

std::string_view ContentType(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

// FNV-1a: the ETag only has to change when the content does.
std::string ETagOf(std::string_view content) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : content) {
    hash = (hash ^ c) * 1099511628211ull;
  }
  return absl::StrFormat("\"%016x\"", hash);
}

const EmbeddedFile* FindFile(std::string_view name) {
  for (const EmbeddedFile& file : EmbeddedDashboardFiles()) {
    if (file.name == name) return &file;
  }
  return nullptr;
}

void AddSecurityHeaders(http::Response& response) {
  response.headers.emplace_back("Content-Security-Policy", kDashboardCsp);
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  response.headers.emplace_back("Referrer-Policy", "no-referrer");
}

}  // namespace

std::optional<DashboardPath> ParseDashboardPath(std::string_view target,
                                                std::string_view prefix) {
  if (!target.starts_with(prefix)) return std::nullopt;
  std::string_view rest = target.substr(prefix.size());
  if (rest.starts_with(kNamespaces)) {
    rest.remove_prefix(kNamespaces.size());
    const size_t slash = rest.find('/');
    if (slash == 0 || slash == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(slash);
  }
  if (!rest.starts_with(kDashboard)) return std::nullopt;
  rest.remove_prefix(kDashboard.size());
  if (rest.empty()) return DashboardPath{.needs_slash = true};
  if (!rest.starts_with('/')) return std::nullopt;
  return DashboardPath{.file = rest.substr(1)};
}

http::Response ServeDashboardFile(const http::Request& request,
                                  const DashboardPath& path) {
  if (path.needs_slash) {
    // Relative, so that it holds behind kubectl proxy and kube-apiserver.
    http::Response moved{.status = 301, .content_type = "text/plain"};
    moved.headers.emplace_back("Location", "dashboard/");
    return moved;
  }
  const EmbeddedFile* file =
      FindFile(path.file.empty() ? "index.html" : path.file);
  if (file == nullptr) {
    http::Response missing{
        .status = 404,
        .content_type = "text/plain; charset=utf-8",
        .body = absl::StrCat("no dashboard file \"", Sv(path.file), "\"\n")};
    AddSecurityHeaders(missing);
    return missing;
  }
  const std::string etag = ETagOf(file->content);
  http::Response response{.content_type = std::string(ContentType(file->name))};
  AddSecurityHeaders(response);
  response.headers.emplace_back("Cache-Control", "no-cache");
  response.headers.emplace_back("ETag", etag);
  for (std::string_view tag : HeaderValues(request, "if-none-match")) {
    if (tag == etag) {
      response.status = 304;
      return response;
    }
  }
  response.body = std::string(file->content);
  return response;
}

}  // namespace gpusched
