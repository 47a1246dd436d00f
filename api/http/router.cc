#include "api/http/router.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpusched::http {

void Router::Add(std::string_view method, std::string_view path,
                 Handler handler) {
  routes_[std::string(path)].insert_or_assign(std::string(method),
                                              std::move(handler));
}

Response Router::Handle(const Request& request) const {
  auto path = routes_.find(request.target);
  if (path == routes_.end()) {
    return JsonError(404, absl::StrCat("no route for path ", request.target));
  }
  const auto& methods = path->second;
  auto method = methods.find(request.method);
  if (method != methods.end()) return method->second(request);

  std::string allow = absl::StrJoin(
      methods, ", ",
      [](std::string* out, const auto& entry) { out->append(entry.first); });
  Response response =
      JsonError(405, absl::StrCat("method ", request.method, " not allowed on ",
                                  request.target, "; allowed: ", allow));
  response.headers.emplace_back("Allow", std::move(allow));
  return response;
}

}  // namespace gpusched::http
