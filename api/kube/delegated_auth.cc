#include "api/kube/delegated_auth.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched::kube {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using StorePtr =
    std::unique_ptr<X509_STORE, Deleter<X509_STORE, X509_STORE_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using StoreCtxPtr =
    std::unique_ptr<X509_STORE_CTX,
                    Deleter<X509_STORE_CTX, X509_STORE_CTX_free>>;
// sk_X509_free is a macro, so it cannot be a template argument.
struct ChainDeleter {
  void operator()(STACK_OF(X509) * chain) const { sk_X509_free(chain); }
};
using ChainPtr = std::unique_ptr<STACK_OF(X509), ChainDeleter>;

// Every certificate of a PEM bundle into a new store.
absl::StatusOr<StorePtr> StoreOf(const std::string& pem) {
  StorePtr store(X509_STORE_new());
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  int added = 0;
  while (store && bio) {
    CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (cert == nullptr) break;
    if (X509_STORE_add_cert(store.get(), cert.get()) == 1) ++added;
  }
  // The read past the last certificate leaves an error on this thread's
  // queue; a later TLS call on the thread (the API client's) would take it
  // for its own.
  ERR_clear_error();
  if (added == 0) {
    return absl::InvalidArgumentError(
        "requestheader-client-ca-file: no PEM certificate");
  }
  return store;
}

CertPtr FromDer(const std::string& der) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  return CertPtr(d2i_X509(nullptr, &p, static_cast<long>(der.size())));
}

std::string CommonName(X509* cert) {
  char text[256] = {};
  const int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert),
                                          NID_commonName, text, sizeof text);
  return n > 0 ? std::string(text, n) : std::string();
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

// "%2F" -> "/": extra keys are percent-encoded in header names.
std::string PercentDecoded(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() &&
        absl::ascii_isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        absl::ascii_isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out.push_back(static_cast<char>(HexValue(text[i + 1]) * 16 +
                                      HexValue(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

}  // namespace

struct RequestHeaderAuthenticator::State {
  RequestHeaderConfig config;
  StorePtr store;
};

absl::StatusOr<RequestHeaderConfig> ReadRequestHeaderConfig(
    KubeClient& client, std::stop_token stop) {
  absl::StatusOr<std::string> json =
      client.Get(kAuthConfigMapPath, {.stop = stop});
  if (!json.ok()) {
    return absl::Status(
        json.status().code(),
        absl::StrCat("ConfigMap kube-system/extension-apiserver-"
                     "authentication: ",
                     json.status().message()));
  }
  return DecodeRequestHeaderConfig(*json);
}

absl::Status RequestHeaderAuthenticator::Update(
    const RequestHeaderConfig& config) {
  absl::StatusOr<StorePtr> store = StoreOf(config.client_ca_pem);
  if (!store.ok()) return store.status();
  auto state = std::make_shared<State>();
  state->config = config;
  state->store = *std::move(store);
  std::lock_guard lock(mu_);
  state_ = std::move(state);
  return absl::OkStatus();
}

bool RequestHeaderAuthenticator::configured() const {
  std::lock_guard lock(mu_);
  return state_ != nullptr;
}

namespace {

// The front proxy's certificate chains to the CA; returns its common name.
absl::StatusOr<std::string> VerifyProxy(X509_STORE* store,
                                        const std::vector<std::string>& der) {
  CertPtr leaf = FromDer(der.front());
  ChainPtr untrusted(sk_X509_new_null());
  std::vector<CertPtr> held;
  for (size_t i = 1; i < der.size(); ++i) {
    if (CertPtr c = FromDer(der[i])) {
      sk_X509_push(untrusted.get(), c.get());
      held.push_back(std::move(c));
    }
  }
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  if (leaf == nullptr || ctx == nullptr ||
      X509_STORE_CTX_init(ctx.get(), store, leaf.get(), untrusted.get()) != 1) {
    ERR_clear_error();
    return absl::UnauthenticatedError("unreadable client certificate");
  }
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT);
  const bool verified = X509_verify_cert(ctx.get()) == 1;
  ERR_clear_error();  // as in StoreOf: the I/O thread also serves TLS
  if (!verified) {
    return absl::UnauthenticatedError(absl::StrCat(
        "client certificate not signed by the requestheader CA: ",
        X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()))));
  }
  return CommonName(leaf.get());
}

std::string FirstValue(const http::Request& request,
                       const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    for (std::string_view v :
         HeaderValues(request, absl::AsciiStrToLower(name))) {
      if (!v.empty()) return std::string(v);
    }
  }
  return "";
}

// Extra attributes: X-Remote-Extra-<key> headers, the key lower-cased and
// percent-decoded, repeated headers adding values.
void AddExtras(const http::Request& request, const std::string& prefix,
               RequestUser& user) {
  const std::string lower = absl::AsciiStrToLower(prefix);
  for (const auto& [name, value] : request.headers) {
    if (!absl::StartsWith(name, lower) || name.size() == lower.size()) continue;
    std::string key =
        absl::AsciiStrToLower(PercentDecoded(name.substr(lower.size())));
    auto it = std::find_if(user.extra.begin(), user.extra.end(),
                           [&](const auto& e) { return e.first == key; });
    if (it == user.extra.end()) {
      it =
          user.extra.emplace(user.extra.end(), key, std::vector<std::string>{});
    }
    it->second.push_back(value);
  }
}

RequestUser UserOf(const http::Request& request,
                   const RequestHeaderConfig& config) {
  RequestUser user{.name = FirstValue(request, config.username_headers)};
  for (const std::string& name : config.group_headers) {
    for (std::string_view v :
         HeaderValues(request, absl::AsciiStrToLower(name))) {
      user.groups.emplace_back(v);
    }
  }
  for (const std::string& prefix : config.extra_headers_prefixes) {
    AddExtras(request, prefix, user);
  }
  return user;
}

}  // namespace

absl::StatusOr<RequestUser> RequestHeaderAuthenticator::Authenticate(
    const http::Request& request) const {
  std::shared_ptr<const State> state;
  {
    std::lock_guard lock(mu_);
    state = state_;
  }
  if (state == nullptr) {
    return absl::UnavailableError(
        "the front proxy's CA is not known yet (extension-apiserver-"
        "authentication not read)");
  }
  if (request.peer_certificates == nullptr ||
      request.peer_certificates->empty()) {
    return absl::UnauthenticatedError("no client certificate");
  }
  absl::StatusOr<std::string> name =
      VerifyProxy(state->store.get(), *request.peer_certificates);
  if (!name.ok()) return name.status();
  const std::vector<std::string>& allowed = state->config.allowed_names;
  if (!allowed.empty() &&
      std::find(allowed.begin(), allowed.end(), *name) == allowed.end()) {
    return absl::UnauthenticatedError(absl::StrCat(
        "client certificate CN \"", *name, "\" is not an allowed front proxy"));
  }
  RequestUser user = UserOf(request, state->config);
  if (user.name.empty()) {
    return absl::UnauthenticatedError("no user in the request headers");
  }
  return user;
}

std::function<absl::StatusOr<std::string>(const std::string&)>
PostSubjectAccessReview(KubeClient& client) {
  return [&client](const std::string& body) {
    return client.Post("/apis/authorization.k8s.io/v1/subjectaccessreviews",
                       body,
                       {.deadline = std::chrono::steady_clock::now() +
                                    std::chrono::seconds(5)});
  };
}

absl::StatusOr<AccessVerdict> AccessReviewer::Review(
    const RequestUser& user, const ResourceAttributes& attributes) {
  const std::string body = EncodeSubjectAccessReview(user, attributes);
  {
    std::lock_guard lock(mu_);
    auto it = cache_.find(body);
    if (it != cache_.end() && it->second.expires > options_.now()) {
      return it->second.verdict;
    }
  }
  absl::StatusOr<std::string> answer = options_.post(body);
  if (!answer.ok()) {
    return absl::Status(
        answer.status().code(),
        absl::StrCat("SubjectAccessReview: ", answer.status().message()));
  }
  absl::StatusOr<AccessVerdict> verdict = DecodeSubjectAccessReview(*answer);
  if (verdict.ok()) Remember(body, *verdict);
  return verdict;
}

// Full: the expired entries go; still full, all go (a burst of distinct
// users is rare, and a review is cheap next to unbounded memory).
void AccessReviewer::Remember(const std::string& key,
                              const AccessVerdict& verdict) {
  const auto now = options_.now();
  std::lock_guard lock(mu_);
  if (cache_.size() >= options_.max_entries) {
    std::erase_if(cache_,
                  [now](const auto& e) { return e.second.expires <= now; });
    if (cache_.size() >= options_.max_entries) cache_.clear();
  }
  cache_[key] = Entry{.verdict = verdict,
                      .expires = now + (verdict.allowed ? options_.allowed_ttl
                                                        : options_.denied_ttl)};
}

}  // namespace gpusched::kube
