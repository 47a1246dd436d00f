#include "tests/kube/fake_apiserver.h"

#include <sys/socket.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace gpusched::kube::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using Request = bhttp::request<bhttp::string_body>;
using Query = std::map<std::string, std::string, std::less<>>;
using Clock = std::chrono::steady_clock;

struct Event {
  int64_t version;
  std::string kind;  // "nodes" | "pods"
  std::string type;
  Json object;
};

struct Reply {
  int status = 200;
  Json body;
};

Json Status(int code, std::string_view reason, std::string_view message) {
  return Json{{"kind", "Status"},   {"apiVersion", "v1"}, {"status", "Failure"},
              {"message", message}, {"reason", reason},   {"code", code}};
}

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

}  // namespace

class FakeApiServer::Impl {
 public:
  explicit Impl(FakeApiServerOptions options)
      : options_(std::move(options)),
        acceptor_(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0)) {
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~Impl() { Shutdown(); }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }
  const FakeApiServerOptions& options() const { return options_; }

  void Put(const std::string& kind, const std::string& key, Json object,
           std::string_view type) {
    std::lock_guard lock(mu_);
    Store(kind)[key] = object;
    Record(kind, type, Store(kind)[key]);
  }
  void Erase(const std::string& kind, std::string_view key, bool watched);
  void Edit(std::string_view key, const std::function<void(Json&)>& edit);
  Json Get(std::string_view key) const {
    std::lock_guard lock(mu_);
    auto it = pods_.find(key);
    return it == pods_.end() ? Json() : it->second;
  }
  int Count(std::string_view what) const {
    std::lock_guard lock(mu_);
    auto it = counts_.find(what);
    return it == counts_.end() ? 0 : it->second;
  }

 private:
  std::map<std::string, Json, std::less<>>& Store(std::string_view kind) {
    return kind == "nodes" ? nodes_ : pods_;
  }
  void Record(std::string_view kind, std::string_view type, Json& object);
  void AcceptLoop();
  void Serve(tcp::socket socket);
  bool Handle(tcp::socket& socket, const Request& request);
  Reply Route(const Request& request, std::string_view path,
              const Query& query);
  Reply List(std::string_view kind, const Query& query);
  Reply PodCall(const Request& request, std::string_view key, bool binding);
  Reply Patch(const Request& request, Json& pod);
  Reply Bind(const Request& request, Json& pod);
  void Watch(tcp::socket& socket, std::string_view kind, const Query& query);
  std::vector<std::string> PendingLocked(std::string_view kind,
                                         int64_t& sent) const;
  void Shutdown();

  const FakeApiServerOptions options_;
  asio::io_context io_;
  tcp::acceptor acceptor_;
  std::thread accept_thread_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::map<std::string, Json, std::less<>> nodes_, pods_;
  int64_t version_ = 1;
  int64_t compacted_ = 0;  // watches from an older version get a 410
  std::deque<Event> events_;
  std::map<std::string, int, std::less<>> counts_;
  bool stopping_ = false;
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
};

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
  auto& store = Store(kind);
  auto it = store.find(key);
  if (it == store.end()) return;
  Json object = it->second;
  store.erase(it);
  if (watched) {
    Record(kind, "DELETED", object);
    return;
  }
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
  if (request[bhttp::field::authorization] != "Bearer " + options_.token) {
    std::lock_guard lock(mu_);
    ++counts_["DENIED"];
    reply = {401, Status(401, "Unauthorized", "Unauthorized")};
  } else if (request.method() == bhttp::verb::get && query.contains("watch") &&
             (path == "/api/v1/nodes" || path == "/api/v1/pods")) {
    Watch(socket, path.substr(8), query);
    return false;  // the client opens a new connection per watch
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

Reply FakeApiServer::Impl::Route(const Request& request, std::string_view path,
                                 const Query& query) {
  if (request.method() == bhttp::verb::get &&
      (path == "/api/v1/nodes" || path == "/api/v1/pods")) {
    return List(path.substr(8), query);
  }
  constexpr std::string_view kNamespaces = "/api/v1/namespaces/";
  if (path.starts_with(kNamespaces)) {
    std::string_view rest = path.substr(kNamespaces.size());
    size_t slash = rest.find("/pods/");
    if (slash != std::string_view::npos) {
      std::string key = std::string(rest.substr(0, slash)) + "/" +
                        std::string(rest.substr(slash + 6));
      bool binding = key.ends_with("/binding");
      if (binding) key.resize(key.size() - 8);
      // The status subresource patches the same object here.
      if (key.ends_with("/status")) key.resize(key.size() - 7);
      return PodCall(request, key, binding);
    }
  }
  return {404, Status(404, "NotFound", "the server could not find it")};
}

Reply FakeApiServer::Impl::List(std::string_view kind, const Query& query) {
  std::lock_guard lock(mu_);
  ++counts_["LIST " + std::string(kind)];
  const auto& store = Store(kind);
  size_t limit = query.contains("limit") ? std::stoul(query.at("limit")) : 0;
  auto it = query.contains("continue") ? store.upper_bound(query.at("continue"))
                                       : store.begin();
  Json items = Json::array();
  std::string last;
  for (; it != store.end() && (limit == 0 || items.size() < limit); ++it) {
    items.push_back(it->second);
    last = it->first;
  }
  Json metadata = {{"resourceVersion", std::to_string(version_)}};
  if (it != store.end()) metadata["continue"] = last;
  return {200, Json{{"kind", kind == "nodes" ? "NodeList" : "PodList"},
                    {"apiVersion", "v1"},
                    {"metadata", metadata},
                    {"items", items}}};
}

Reply FakeApiServer::Impl::PodCall(const Request& request, std::string_view key,
                                   bool binding) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(key);
  const bool get = request.method() == bhttp::verb::get && !binding;
  const bool patch = request.method() == bhttp::verb::patch && !binding;
  const bool post = request.method() == bhttp::verb::post && binding;
  ++counts_[get     ? "GET pod"
            : patch ? "PATCH pod"
            : post  ? "POST binding"
                    : "OTHER"];
  if (!get && !patch && !post) {
    return {405, Status(405, "MethodNotAllowed", "method not allowed")};
  }
  if (it == pods_.end()) {
    std::string name(key.substr(key.find('/') + 1));
    return {404, Status(404, "NotFound", "pods \"" + name + "\" not found")};
  }
  if (get) return {200, it->second};
  return patch ? Patch(request, it->second) : Bind(request, it->second);
}

Reply FakeApiServer::Impl::Patch(const Request& request, Json& pod) {
  if (request[bhttp::field::content_type] != "application/merge-patch+json") {
    return {415, Status(415, "UnsupportedMediaType",
                        "the body of the request was in an unknown format")};
  }
  Json patch = Json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
  if (patch.is_discarded()) {
    return {400, Status(400, "BadRequest", "invalid JSON in patch")};
  }
  pod.merge_patch(patch);
  Record("pods", "MODIFIED", pod);
  return {200, pod};
}

// As the registry's pod binding storage: UID precondition, then "already
// assigned" whatever the node, then spec.nodeName, with the Binding's own
// annotations merged into the pod's in the same write.
Reply FakeApiServer::Impl::Bind(const Request& request, Json& pod) {
  Json binding =
      Json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
  if (binding.is_discarded() || binding.value("kind", "") != "Binding") {
    return {400, Status(400, "BadRequest", "not a Binding")};
  }
  const std::string name = pod["metadata"]["name"];
  const std::string uid = binding["metadata"].value("uid", "");
  const std::string node = binding["target"].value("name", "");
  if (!uid.empty() && uid != pod["metadata"]["uid"]) {
    return {409, Status(409, "Conflict",
                        "Precondition failed: UID in precondition: " + uid +
                            ", UID in object meta: " +
                            pod["metadata"]["uid"].get<std::string>())};
  }
  const std::string bound = pod["spec"].value("nodeName", "");
  if (!bound.empty()) {
    return {409, Status(409, "Conflict",
                        "Operation cannot be fulfilled on pods/binding \"" +
                            name + "\": pod " + name +
                            " is already assigned to node \"" + bound + "\"")};
  }
  pod["spec"]["nodeName"] = node;
  if (binding["metadata"].contains("annotations")) {
    for (const auto& [key, value] : binding["metadata"]["annotations"].items()) {
      pod["metadata"]["annotations"][key] = value;
    }
  }
  Record("pods", "MODIFIED", pod);
  return {201, Json{{"kind", "Status"}, {"status", "Success"}, {"code", 201}}};
}

// Events of `kind` newer than `sent` as lines; advances `sent`.
std::vector<std::string> FakeApiServer::Impl::PendingLocked(
    std::string_view kind, int64_t& sent) const {
  std::vector<std::string> lines;
  for (const Event& event : events_) {
    if (event.version <= sent || event.kind != kind) continue;
    lines.push_back(Line(event.type, event.object));
    sent = event.version;
  }
  return lines;
}

// Streams events as chunks until `watch_hold` passes, then a bookmark.
void FakeApiServer::Impl::Watch(tcp::socket& socket, std::string_view kind,
                                const Query& query) {
  bhttp::response<bhttp::empty_body> header{bhttp::status::ok, 11};
  header.set(bhttp::field::content_type, "application/json");
  header.chunked(true);
  bhttp::response_serializer<bhttp::empty_body> serializer{header};
  boost::system::error_code ec;
  bhttp::write_header(socket, serializer, ec);
  const Clock::time_point deadline = Clock::now() + options_.watch_hold;
  std::unique_lock lock(mu_);
  ++counts_["WATCH " + std::string(kind)];
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
      lines = PendingLocked(kind, sent);
      done = stopping_ || Clock::now() >= deadline;
      Json bookmark = {
          {"kind", kind == "nodes" ? "Node" : "Pod"},
          {"apiVersion", "v1"},
          {"metadata", {{"resourceVersion", std::to_string(version_)}}}};
      if (done) lines.push_back(Line("BOOKMARK", bookmark));
    }
    lock.unlock();
    for (const std::string& line : lines) {
      asio::write(socket, bhttp::make_chunk(asio::buffer(line)), ec);
    }
    lock.lock();
    if (!done) changed_.wait_until(lock, deadline);
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

Json FakeApiServer::Pod(std::string_view key) const { return impl_->Get(key); }

int FakeApiServer::Count(std::string_view what) const {
  return impl_->Count(what);
}

}  // namespace gpusched::kube::testing
