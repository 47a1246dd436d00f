// Exact-path request routing. Kubernetes extender endpoints are a handful of
// fixed paths, so there are no patterns: a path either matches or it does not.
#ifndef GPUSCHED_API_HTTP_ROUTER_H_
#define GPUSCHED_API_HTTP_ROUTER_H_

#include <map>
#include <string>
#include <string_view>

#include "api/http/message.h"

namespace gpusched::http {

class Router {
 public:
  // Registers `handler` for `method` on exactly `path`. A later registration
  // of the same method and path replaces the earlier one. Not thread-safe:
  // register everything before serving.
  void Add(std::string_view method, std::string_view path, Handler handler);

  // Dispatches to the matching handler. Unknown path: 404 JSON error naming
  // the path. Known path with another method: 405 with an Allow header.
  Response Handle(const Request& request) const;

 private:
  // path -> method -> handler. Ordered maps so the Allow header is stable.
  std::map<std::string, std::map<std::string, Handler, std::less<>>,
           std::less<>>
      routes_;
};

}  // namespace gpusched::http

#endif  // GPUSCHED_API_HTTP_ROUTER_H_
