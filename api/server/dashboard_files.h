// The dashboard's static files (api/server/dashboard/: index.html,
// dashboard.js, map.js, dashboard.css, favicon.svg), compiled into the binary
// by api/embed_files.cmake and served with a strict Content-Security-Policy:
// the page loads nothing but these files and fetches nothing but the
// visibility API beside it (relative URLs), so it works through
// `kubectl proxy`, the aggregated API and the loopback listener alike.
//
// The files carry no cluster data: whoever reaches them may have them.
// What the page then shows comes from the visibility API, authorized per
// request as every other read of it.
#ifndef GPUSCHED_API_SERVER_DASHBOARD_FILES_H_
#define GPUSCHED_API_SERVER_DASHBOARD_FILES_H_

#include <optional>
#include <span>
#include <string_view>

#include "api/http/message.h"

namespace gpusched {

struct EmbeddedFile {
  std::string_view name;  // "index.html"
  std::string_view content;
};

// Generated (embedded_dashboard.cc), sorted by name.
std::span<const EmbeddedFile> EmbeddedDashboardFiles();

// The headers every dashboard file goes out with: only same-origin
// scripts, styles and fetches, never framed, no MIME sniffing.
inline constexpr std::string_view kDashboardCsp =
    "default-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

// Where a request path asks for a dashboard file: the part after
// ".../dashboard/" ("" for the page itself), or nullopt when the path is
// not under a dashboard prefix. `prefix` is the API version's path
// (/apis/visibility.gpusched.io/v1alpha1); the page is served below it
// and below each namespace (.../namespaces/NS/dashboard/), where it shows
// that namespace. The path without its slash gets "" too, and a redirect.
struct DashboardPath {
  std::string_view file;
  bool needs_slash = false;  // ".../dashboard": redirect to ".../dashboard/"
};
std::optional<DashboardPath> ParseDashboardPath(std::string_view target,
                                                std::string_view prefix);

// The response for a dashboard file: 200 with its content type, the CSP,
// nosniff and an ETag (a request with that ETag in If-None-Match gets
// 304), revalidated on each load (no-cache), so a new binary's files are
// never mixed with an old page; 404 for a name that is not a file; 301
// to the slashed path for `needs_slash`.
http::Response ServeDashboardFile(const http::Request& request,
                                  const DashboardPath& path);

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_DASHBOARD_FILES_H_
