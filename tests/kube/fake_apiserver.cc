#include "tests/kube/fake_apiserver.h"

#include <sys/socket.h>

#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <utility>

#include "tests/kube/fake_apiserver_impl.h"

namespace gpusched::kube::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

std::string PercentDecode(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out.push_back(static_cast<char>(
          std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

Query ParseQuery(std::string_view query) {
  Query out;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    out[std::string(pair.substr(0, eq))] =
        eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

int64_t VersionOf(const Query& query) {
  auto it = query.find("resourceVersion");
  return it == query.end() || it->second.empty() ? -1 : std::stoll(it->second);
}

std::string Line(std::string_view type, const Json& object) {
  return Json{{"type", type}, {"object", object}}.dump() + "\n";
}

std::string ApiVersionOf(const Scope& scope) {
  if (!scope.api_version.empty()) return scope.api_version;
  return scope.kind == "customresourcedefinitions" ? "apiextensions.k8s.io/v1"
                                                   : "v1";
}

}  // namespace

Json Status(int code, std::string_view reason, std::string_view message) {
  return Json{{"kind", "Status"},   {"apiVersion", "v1"}, {"status", "Failure"},
              {"message", message}, {"reason", reason},   {"code", code}};
}

std::string SelectedName(const Query& query) {
  constexpr std::string_view kByName = "metadata.name=";
  auto it = query.find("fieldSelector");
  if (it == query.end() || !it->second.starts_with(kByName)) return "";
  return it->second.substr(kByName.size());
}

bool Scope::Covers(std::string_view event_kind, const Json& object) const {
  if (event_kind != kind) return false;
  if (!api_version.empty() && object.value("apiVersion", "") != api_version) {
    return false;
  }
  auto metadata = object.find("metadata");
  if (metadata == object.end()) return ns.empty() && name.empty();
  return (ns.empty() || metadata->value("namespace", "") == ns) &&
         (name.empty() || metadata->value("name", "") == name);
}

std::string_view Scope::Resource() const {
  return std::string_view(kind).substr(kind.rfind('/') + 1);
}

Reply NotFound(std::string_view resource, std::string_view name) {
  return {404, Status(404, "NotFound",
                      std::string(resource) + " \"" + std::string(name) +
                          "\" not found")};
}

FakeApiServer::Impl::Impl(FakeApiServerOptions options)
    : options_(std::move(options)),
      acceptor_(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0)) {
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

// A served resource's kind is "group/version/resource"; the other kinds
// have a store of their own.
Store& FakeApiServer::Impl::StoreOf(std::string_view kind) {
  if (kind.find('/') != std::string_view::npos) {
    return objects_[std::string(kind)];
  }
  return const_cast<Store&>(std::as_const(*this).StoreOf(kind));
}

const Store& FakeApiServer::Impl::StoreOf(std::string_view kind) const {
  static const Store kNone;
  if (kind.find('/') != std::string_view::npos) {
    auto it = objects_.find(kind);
    return it == objects_.end() ? kNone : it->second;
  }
  return kind == "nodes"       ? nodes_
         : kind == "pods"      ? pods_
         : kind == "podgroups" ? podgroups_
                               : crds_;
}

std::string FakeApiServer::Impl::KindOfLocked(const Scope& scope) const {
  auto served = served_.find(scope.kind);
  if (served != served_.end()) return served->second.kind;
  return scope.kind == "nodes"       ? "Node"
         : scope.kind == "pods"      ? "Pod"
         : scope.kind == "podgroups" ? "PodGroup"
                                     : "CustomResourceDefinition";
}

void FakeApiServer::Impl::Put(const std::string& kind, const std::string& key,
                              Json object, std::string_view type) {
  std::lock_guard lock(mu_);
  StoreOf(kind)[key] = object;
  Record(kind, type, StoreOf(kind)[key]);
}

void FakeApiServer::Impl::UpsertLocked(const std::string& kind,
                                       const std::string& key, Json object) {
  Store& store = StoreOf(kind);
  const bool replaced = store.contains(key);
  Json& stored = store[key] = std::move(object);
  Record(kind, replaced ? "MODIFIED" : "ADDED", stored);
}

Json FakeApiServer::Impl::Get(std::string_view kind,
                              std::string_view key) const {
  std::lock_guard lock(mu_);
  const Store& store = StoreOf(kind);
  auto it = store.find(key);
  return it == store.end() ? Json() : it->second;
}

int FakeApiServer::Impl::Count(std::string_view what) const {
  std::lock_guard lock(mu_);
  auto it = counts_.find(what);
  return it == counts_.end() ? 0 : it->second;
}

void FakeApiServer::Impl::Record(std::string_view kind, std::string_view type,
                                 Json& object) {
  ++version_;
  object["metadata"]["resourceVersion"] = std::to_string(version_);
  events_.push_back(
      Event{version_, std::string(kind), std::string(type), object});
  changed_.notify_all();
}

void FakeApiServer::Impl::Erase(const std::string& kind, std::string_view key,
                                bool watched) {
  std::lock_guard lock(mu_);
  auto& store = StoreOf(kind);
  auto it = store.find(key);
  if (it == store.end()) return;
  Json object = it->second;
  store.erase(it);
  if (watched) {
    Record(kind, "DELETED", object);
  } else {
    CompactLocked();
  }
}

void FakeApiServer::Impl::CompactLocked() {
  compacted_ = ++version_;
  events_.clear();
  changed_.notify_all();
}

void FakeApiServer::Impl::Edit(std::string_view key,
                               const std::function<void(Json&)>& edit) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  edit(it->second);
  Record("pods", "MODIFIED", it->second);
}

void FakeApiServer::Impl::AcceptLoop() {
  while (true) {
    boost::system::error_code ec;
    tcp::socket socket = acceptor_.accept(ec);
    std::lock_guard lock(mu_);
    if (stopping_) return;
    if (ec) continue;
    open_fds_.push_back(socket.native_handle());
    threads_.emplace_back(
        [this, s = std::move(socket)]() mutable { Serve(std::move(s)); });
  }
}

void FakeApiServer::Impl::Serve(tcp::socket socket) {
  beast::flat_buffer buffer;
  while (true) {
    Request request;
    boost::system::error_code ec;
    bhttp::read(socket, buffer, request, ec);
    if (ec || !Handle(socket, request)) break;
  }
  // Forget the descriptor before it closes, so Shutdown never touches a
  // number the OS has handed out again.
  std::lock_guard lock(mu_);
  std::erase(open_fds_, socket.native_handle());
}

bool FakeApiServer::Impl::Handle(tcp::socket& socket, const Request& request) {
  std::string_view target = request.target();
  size_t question = target.find('?');
  std::string_view path = target.substr(0, question);
  Query query = ParseQuery(question == std::string_view::npos
                               ? std::string_view()
                               : target.substr(question + 1));
  Reply reply;
  std::optional<Scope> collection;
  if (request[bhttp::field::authorization] != "Bearer " + options_.token) {
    std::lock_guard lock(mu_);
    ++counts_["DENIED"];
    reply = {401, Status(401, "Unauthorized", "Unauthorized")};
  } else if (request.method() == bhttp::verb::get &&
             (collection = CollectionOf(path, query)) && !collection->refused &&
             query.contains("watch")) {
    Watch(socket, *collection, query);
    return false;  // the client opens a new connection per watch
  } else if (std::optional<Reply> failing = Failing()) {
    reply = *std::move(failing);
  } else if (std::optional<Reply> canned = Canned(request, path)) {
    reply = *std::move(canned);
  } else if (collection) {
    reply =
        collection->refused ? *collection->refused : List(*collection, query);
  } else {
    reply = Route(request, path, query);
  }
  bhttp::response<bhttp::string_body> response{
      static_cast<bhttp::status>(reply.status), 11};
  response.set(bhttp::field::content_type, "application/json");
  response.body() = reply.body.dump();
  response.keep_alive(request.keep_alive());
  response.prepare_payload();
  boost::system::error_code ec;
  bhttp::write(socket, response, ec);
  return !ec && request.keep_alive();
}

std::optional<Scope> FakeApiServer::Impl::CollectionOf(std::string_view path,
                                                       const Query& query) {
  constexpr std::string_view kCrds =
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  constexpr std::string_view kPodGroups = "/podgroups";
  if (path == "/api/v1/nodes" || path == "/api/v1/pods") {
    return Scope{.kind = std::string(path.substr(8))};
  }
  if (path == kCrds) return CrdScope(query);
  if (path.starts_with("/apis/") && path.ends_with(kPodGroups)) {
    return PodGroupScope(path.substr(6, path.size() - 6 - kPodGroups.size()));
  }
  return ResourceScope(path, query);
}

Reply FakeApiServer::Impl::Route(const Request& request, std::string_view path,
                                 const Query& /*query*/) {
  constexpr std::string_view kNamespaces = "/api/v1/namespaces/";
  constexpr std::string_view kEvents = "/apis/events.k8s.io/v1/namespaces/";
  if (path.starts_with(kNamespaces)) {
    std::string_view rest = path.substr(kNamespaces.size());
    const size_t slash = rest.find("/pods/");
    if (slash != std::string_view::npos) {
      std::string_view name = rest.substr(slash + 6);
      const size_t sub = name.find('/');
      std::string key = std::string(rest.substr(0, slash)) + "/" +
                        std::string(name.substr(0, sub));
      return PodCall(request, key,
                     sub == std::string_view::npos ? "" : name.substr(sub + 1));
    }
    if (std::optional<Reply> reply = ResourceCall(request, path)) {
      return *std::move(reply);
    }
  } else if (path.starts_with(kEvents) && path.ends_with("/events") &&
             request.method() == bhttp::verb::post) {
    std::string_view ns = path.substr(kEvents.size());
    return CreateEvent(request, ns.substr(0, ns.find('/')));
  } else if (path.starts_with("/apis/") &&
             path.find("/podgroups/") != std::string_view::npos) {
    const size_t at = path.find("/namespaces/");
    if (at != std::string_view::npos) {
      return PodGroupCall(request, path.substr(6, at - 6),
                          path.substr(at + 12));
    }
  } else if (std::optional<Reply> reply = ResourceCall(request, path)) {
    return *std::move(reply);
  }
  return {404, Status(404, "NotFound",
                      "the server could not find the requested resource")};
}

Reply FakeApiServer::Impl::List(const Scope& scope, const Query& query) {
  std::lock_guard lock(mu_);
  ++counts_["LIST " + std::string(scope.Resource())];
  const auto& store = StoreOf(scope.kind);
  size_t limit = query.contains("limit") ? std::stoul(query.at("limit")) : 0;
  auto it = query.contains("continue") ? store.upper_bound(query.at("continue"))
                                       : store.begin();
  Json items = Json::array();
  std::string last;
  for (; it != store.end(); ++it) {
    if (!scope.Covers(scope.kind, it->second)) continue;
    if (limit != 0 && items.size() == limit) break;
    items.push_back(it->second);
    if (scope.api_version == kNativePodGroupApi) {
      // A built-in type's list leaves them out of its items (a CRD's keeps
      // them); watch events carry them.
      items.back().erase("apiVersion");
      items.back().erase("kind");
    }
    last = it->first;
  }
  Json metadata = {{"resourceVersion", std::to_string(version_)}};
  if (it != store.end()) metadata["continue"] = last;
  return {200, Json{{"kind", KindOfLocked(scope) + "List"},
                    {"apiVersion", ApiVersionOf(scope)},
                    {"metadata", metadata},
                    {"items", items}}};
}

// Events of `kind` newer than `sent` as lines; advances `sent`.
std::vector<std::string> FakeApiServer::Impl::PendingLocked(
    const Scope& scope, int64_t& sent) const {
  std::vector<std::string> lines;
  for (const Event& event : events_) {
    if (event.version <= sent || !scope.Covers(event.kind, event.object)) {
      continue;
    }
    lines.push_back(Line(event.type, event.object));
    sent = event.version;
  }
  return lines;
}

// Streams events as chunks until `watch_hold` passes, then a bookmark.
void FakeApiServer::Impl::Watch(tcp::socket& socket, const Scope& scope,
                                const Query& query) {
  bhttp::response<bhttp::empty_body> header{bhttp::status::ok, 11};
  header.set(bhttp::field::content_type, "application/json");
  header.chunked(true);
  bhttp::response_serializer<bhttp::empty_body> serializer{header};
  boost::system::error_code ec;
  bhttp::write_header(socket, serializer, ec);
  const Clock::time_point deadline = Clock::now() + options_.watch_hold;
  std::unique_lock lock(mu_);
  ++counts_["WATCH " + std::string(scope.Resource())];
  int64_t sent = VersionOf(query) < 0 ? version_ : VersionOf(query);
  for (bool done = false; !done && !ec;) {
    std::vector<std::string> lines;
    if (sent < compacted_) {
      lines.push_back(Line(
          "ERROR", Status(410, "Expired",
                          "too old resource version: " + std::to_string(sent) +
                              " (" + std::to_string(compacted_) + ")")));
      done = true;
    } else {
      lines = PendingLocked(scope, sent);
      done = stopping_ || Clock::now() >= deadline;
      Json bookmark = {
          {"kind", KindOfLocked(scope)},
          {"apiVersion", ApiVersionOf(scope)},
          {"metadata", {{"resourceVersion", std::to_string(version_)}}}};
      if (done) lines.push_back(Line("BOOKMARK", bookmark));
    }
    // A change made while the lines are written must not be slept
    // through: wait for the version to move on, not for a notification.
    const int64_t seen = version_;
    lock.unlock();
    for (const std::string& line : lines) {
      asio::write(socket, bhttp::make_chunk(asio::buffer(line)), ec);
    }
    lock.lock();
    if (!done) {
      changed_.wait_until(lock, deadline,
                          [&] { return stopping_ || version_ != seen; });
    }
  }
  lock.unlock();
  asio::write(socket, bhttp::make_chunk_last(), ec);
}

void FakeApiServer::Impl::Shutdown() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    changed_.notify_all();
  }
  ::shutdown(acceptor_.native_handle(), SHUT_RDWR);  // wakes accept()
  accept_thread_.join();
  {
    std::lock_guard lock(mu_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  for (std::thread& thread : threads_) thread.join();
}

FakeApiServer::FakeApiServer(FakeApiServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
FakeApiServer::~FakeApiServer() = default;

uint16_t FakeApiServer::port() const { return impl_->port(); }

KubeConfig FakeApiServer::Config() const {
  KubeConfig config;
  config.host = "127.0.0.1";
  config.port = port();
  config.tls = false;
  config.token = impl_->options().token;
  config.source = "fake API server";
  return config;
}

void FakeApiServer::AddNode(Json node) {
  const std::string name = node["metadata"]["name"];
  impl_->Put("nodes", name, std::move(node), "ADDED");
}

void FakeApiServer::DeleteNode(std::string_view name) {
  impl_->Erase("nodes", name, /*watched=*/true);
}

void FakeApiServer::DeleteNodeUnwatched(std::string_view name) {
  impl_->Erase("nodes", name, /*watched=*/false);
}

void FakeApiServer::AddPod(Json pod) {
  const std::string key = pod["metadata"]["namespace"].get<std::string>() +
                          "/" + pod["metadata"]["name"].get<std::string>();
  impl_->Put("pods", key, std::move(pod), "ADDED");
}

void FakeApiServer::UpdatePod(std::string_view key,
                              const std::function<void(Json&)>& edit) {
  impl_->Edit(key, edit);
}

void FakeApiServer::DeletePod(std::string_view key) {
  impl_->Erase("pods", key, /*watched=*/true);
}

Json FakeApiServer::Pod(std::string_view key) const {
  return impl_->Get("pods", key);
}

void FakeApiServer::AddPodGroup(Json group) {
  const std::string api = group["apiVersion"];
  const std::string key = api.substr(0, api.find('/')) + "/" +
                          group["metadata"]["namespace"].get<std::string>() +
                          "/" + group["metadata"]["name"].get<std::string>();
  impl_->Put("podgroups", key, std::move(group), "ADDED");
}

Json FakeApiServer::PodGroup(std::string_view api_group,
                             std::string_view key) const {
  return impl_->Get("podgroups",
                    std::string(api_group) + "/" + std::string(key));
}

void FakeApiServer::BlockEvictions(std::string_view key,
                                   std::string_view budget) {
  impl_->BlockEvictions(key, budget);
}

void FakeApiServer::DenyPodUpdates(std::string_view key, int status,
                                   std::string_view message) {
  impl_->DenyPodUpdates(key, status, message);
}

void FakeApiServer::RaceNextGets(std::string_view key, int gets) {
  impl_->RaceNextGets(key, gets);
}

std::vector<Json> FakeApiServer::Events() const { return impl_->Events(); }

void FakeApiServer::SetEventDelay(std::chrono::milliseconds delay) {
  impl_->SetEventDelay(delay);
}

void FakeApiServer::SetPodWriteDelay(std::chrono::milliseconds delay) {
  impl_->SetPodWriteDelay(delay);
}

std::vector<std::string> FakeApiServer::PodWriteLog() const {
  return impl_->PodWriteLog();
}

void FakeApiServer::FailNext(int requests, int status) {
  impl_->FailNext(requests, status);
}

void FakeApiServer::Impl::FailNext(int requests, int status) {
  std::lock_guard lock(mu_);
  fail_next_ = requests;
  fail_status_ = status;
}

std::optional<Reply> FakeApiServer::Impl::Failing() {
  std::lock_guard lock(mu_);
  if (fail_next_ == 0) return std::nullopt;
  --fail_next_;
  ++counts_["FAILED"];
  return Reply{fail_status_, Status(fail_status_, "ServiceUnavailable",
                                    "the server is going away")};
}

void FakeApiServer::SetReply(std::string_view path, int status, Json body) {
  impl_->SetReply(path, status, std::move(body));
}

void FakeApiServer::Impl::SetReply(std::string_view path, int status,
                                   Json body) {
  std::lock_guard lock(mu_);
  canned_[std::string(path)] = Reply{status, std::move(body)};
}

std::optional<Reply> FakeApiServer::Impl::Canned(const Request& request,
                                                 std::string_view path) {
  if (request.method() != bhttp::verb::get) return std::nullopt;
  std::lock_guard lock(mu_);
  auto it = canned_.find(path);
  if (it == canned_.end()) return std::nullopt;
  ++counts_["GET " + std::string(path)];
  return it->second;
}

int FakeApiServer::Count(std::string_view what) const {
  return impl_->Count(what);
}

}  // namespace gpusched::kube::testing
