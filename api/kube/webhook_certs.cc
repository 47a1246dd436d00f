#include "api/kube/webhook_certs.h"

#include <arpa/inet.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <spdlog/spdlog.h>

#include <ctime>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/base/strings.h"

namespace gpusched::kube {
namespace {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using CertPtr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

// The last OpenSSL error of this thread, for messages.
absl::Status OpenSslError(std::string_view step) {
  char text[256] = "unknown error";
  if (unsigned long code = ERR_get_error(); code != 0) {
    ERR_error_string_n(code, text, sizeof(text));
  }
  ERR_clear_error();
  return absl::InternalError(
      absl::StrCat("webhook certificate: ", Sv(step), ": ", text));
}

bool IsIpLiteral(const std::string& name) {
  unsigned char buffer[16];
  return inet_pton(AF_INET, name.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, name.c_str(), buffer) == 1;
}

std::string SubjectAltNames(const std::vector<std::string>& names) {
  return absl::StrJoin(names, ",", [](std::string* out, const std::string& n) {
    absl::StrAppend(out, IsIpLiteral(n) ? "IP:" : "DNS:", n);
  });
}

// A random positive 128-bit serial: two CAs made by two replicas at the same
// second must not share issuer and serial.
absl::Status SetRandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof(bytes)) != 1) return OpenSslError("RAND_bytes");
  bytes[0] &= 0x7f;
  std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> serial(
      BN_bin2bn(bytes, sizeof(bytes), nullptr));
  if (serial == nullptr ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert)) ==
          nullptr) {
    return OpenSslError("serial number");
  }
  return absl::OkStatus();
}

struct CertSpec {
  std::string common_name;
  std::chrono::hours validity;
  // (NID, value in openssl.cnf syntax), e.g. {NID_key_usage, "critical,..."}.
  std::vector<std::pair<int, std::string>> extensions;
};

absl::Status AddExtensions(X509* cert, X509* issuer, const CertSpec& spec) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, cert, nullptr, nullptr, 0);
  for (const auto& [nid, value] : spec.extensions) {
    X509_EXTENSION* extension =
        X509V3_EXT_conf_nid(nullptr, &context, nid, value.c_str());
    if (extension == nullptr) return OpenSslError(value);
    const bool added = X509_add_ext(cert, extension, -1) == 1;
    X509_EXTENSION_free(extension);
    if (!added) return OpenSslError("X509_add_ext");
  }
  return absl::OkStatus();
}

// Issues a certificate for `key`; a null `issuer` makes it self-signed.
absl::StatusOr<CertPtr> Issue(EVP_PKEY* key, const CertSpec& spec, X509* issuer,
                              EVP_PKEY* issuer_key) {
  CertPtr cert(X509_new());
  X509* x = cert.get();
  if (x == nullptr || X509_set_version(x, X509_VERSION_3) != 1) {
    return OpenSslError("X509_new");
  }
  if (absl::Status s = SetRandomSerial(x); !s.ok()) return s;
  const long seconds = std::chrono::seconds(spec.validity).count();
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), seconds);
  X509_NAME* subject = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(
      subject, "CN", MBSTRING_UTF8,
      reinterpret_cast<const unsigned char*>(spec.common_name.c_str()), -1, -1,
      0);
  X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : subject);
  X509_set_pubkey(x, key);
  if (absl::Status s = AddExtensions(x, issuer ? issuer : x, spec); !s.ok()) {
    return s;
  }
  if (X509_sign(x, issuer_key ? issuer_key : key, EVP_sha256()) <= 0) {
    return OpenSslError("X509_sign");
  }
  return cert;
}

template <typename Write>
absl::StatusOr<std::string> ToPem(std::string_view what, Write write) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || write(bio.get()) != 1) return OpenSslError(what);
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

absl::StatusOr<std::string> CertPem(X509* cert) {
  return ToPem("PEM_write_bio_X509",
               [cert](BIO* bio) { return PEM_write_bio_X509(bio, cert); });
}

absl::StatusOr<std::string> KeyPem(EVP_PKEY* key) {
  return ToPem("PEM_write_bio_PrivateKey", [key](BIO* bio) {
    return PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr,
                                    nullptr);
  });
}

absl::StatusOr<CertPtr> ParseCert(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  CertPtr cert(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)
                   : nullptr);
  if (cert == nullptr) return OpenSslError("reading the serving certificate");
  return cert;
}

bool Covers(X509* cert, const std::string& name) {
  if (IsIpLiteral(name)) return X509_check_ip_asc(cert, name.c_str(), 0) == 1;
  return X509_check_host(cert, name.data(), name.size(), 0, nullptr) == 1;
}

std::string SecretPath(const WebhookCertOptions& options) {
  return absl::StrCat("/api/v1/namespaces/", options.secret_namespace,
                      "/secrets/", options.secret_name);
}

std::string SecretName(const WebhookCertOptions& options) {
  return absl::StrCat(options.secret_namespace, "/", options.secret_name);
}

absl::Status Annotate(const absl::Status& status, std::string_view what) {
  return absl::Status(status.code(),
                      absl::StrCat(Sv(what), ": ", status.message()));
}

// The certificates of the stored Secret `name`.
absl::StatusOr<WebhookCerts> StoredCerts(const std::string& json,
                                         const std::string& name) {
  absl::StatusOr<WebhookCerts> certs = DecodeWebhookSecret(json);
  if (!certs.ok()) {
    return Annotate(certs.status(),
                    absl::StrCat(name, " (delete it to get a new one)"));
  }
  return certs;
}

}  // namespace

absl::StatusOr<WebhookCerts> MakeWebhookCerts(
    const std::vector<std::string>& names, std::chrono::hours validity) {
  if (names.empty()) {
    return absl::InvalidArgumentError("webhook certificate: no names");
  }
  KeyPtr ca_key(EVP_EC_gen("P-256"));
  KeyPtr key(EVP_EC_gen("P-256"));
  if (ca_key == nullptr || key == nullptr) return OpenSslError("EVP_EC_gen");
  absl::StatusOr<CertPtr> ca =
      Issue(ca_key.get(),
            {.common_name = "gpusched-webhook-ca",
             .validity = validity,
             .extensions = {{NID_basic_constraints, "critical,CA:TRUE"},
                            {NID_key_usage, "critical,keyCertSign,cRLSign"},
                            {NID_subject_key_identifier, "hash"}}},
            nullptr, nullptr);
  if (!ca.ok()) return ca.status();
  absl::StatusOr<CertPtr> cert =
      Issue(key.get(),
            {.common_name = names.front(),
             .validity = validity,
             .extensions = {{NID_basic_constraints, "critical,CA:FALSE"},
                            {NID_key_usage, "critical,digitalSignature"},
                            {NID_ext_key_usage, "serverAuth"},
                            {NID_authority_key_identifier, "keyid"},
                            {NID_subject_alt_name, SubjectAltNames(names)}}},
            ca->get(), ca_key.get());
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> ca_pem = CertPem(ca->get());
  absl::StatusOr<std::string> cert_pem = CertPem(cert->get());
  absl::StatusOr<std::string> key_pem = KeyPem(key.get());
  if (!ca_pem.ok()) return ca_pem.status();
  if (!cert_pem.ok()) return cert_pem.status();
  if (!key_pem.ok()) return key_pem.status();
  return WebhookCerts{.ca_pem = *std::move(ca_pem),
                      .cert_pem = *std::move(cert_pem),
                      .key_pem = *std::move(key_pem)};
}

std::vector<std::string> ServingProblems(
    const WebhookCerts& certs, const std::vector<std::string>& names) {
  absl::StatusOr<CertPtr> cert = ParseCert(certs.cert_pem);
  if (!cert.ok()) return {std::string(cert.status().message())};
  std::vector<std::string> problems;
  for (const std::string& name : names) {
    if (!Covers(cert->get(), name)) {
      problems.push_back(absl::StrCat("does not cover the name ", name));
    }
  }
  std::time_t soon = std::time(nullptr) + 30 * 24 * 3600;
  if (X509_cmp_time(X509_get0_notAfter(cert->get()), &soon) <= 0) {
    problems.push_back("expires within 30 days");
  }
  return problems;
}

absl::StatusOr<WebhookCerts> GetOrCreateWebhookSecret(
    KubeClient& client, const WebhookCertOptions& options,
    std::stop_token stop) {
  const std::string name = SecretName(options);
  const CallOptions call{.stop = stop};
  absl::StatusOr<std::string> got = client.Get(SecretPath(options), call);
  if (!got.ok() && !absl::IsNotFound(got.status())) {
    return Annotate(got.status(), absl::StrCat("get Secret ", name));
  }
  if (got.ok()) return StoredCerts(*got, name);
  absl::StatusOr<WebhookCerts> made =
      MakeWebhookCerts(options.names, options.validity);
  if (!made.ok()) return made.status();
  absl::StatusOr<std::string> created = client.Post(
      absl::StrCat("/api/v1/namespaces/", options.secret_namespace, "/secrets"),
      EncodeWebhookSecret(options.secret_namespace, options.secret_name, *made),
      call);
  if (created.ok()) {
    spdlog::info("webhook: created Secret {} names={}", name,
                 absl::StrJoin(options.names, ","));
    return made;
  }
  if (!absl::IsAborted(created.status())) {
    return Annotate(created.status(), absl::StrCat("create Secret ", name));
  }
  // 409: another replica created it between our get and create. Use its
  // certificate, so that the caBundle both patch in is the same CA.
  spdlog::info("webhook: Secret {} was created by another replica", name);
  got = client.Get(SecretPath(options), call);
  if (!got.ok()) {
    return Annotate(got.status(), absl::StrCat("get Secret ", name));
  }
  return StoredCerts(*got, name);
}

namespace {

using PatchEncoder = absl::StatusOr<std::optional<std::string>> (*)(
    std::string_view object_json, std::string_view ca_pem);

// Gets the object at `path`, and patches it when `encode` says its
// caBundle differs. A 409 means it changed since the get: read it again.
absl::StatusOr<bool> EnsureCaBundleOf(
    KubeClient& client, const std::string& path, const std::string& what,
    PatchEncoder encode, std::string_view ca_pem, std::stop_token stop) {
  const CallOptions call{.stop = stop};
  absl::Status last;
  for (int attempt = 0; attempt < 3; ++attempt) {
    absl::StatusOr<std::string> object = client.Get(path, call);
    if (!object.ok()) return Annotate(object.status(), what);
    absl::StatusOr<std::optional<std::string>> patch = encode(*object, ca_pem);
    if (!patch.ok()) return Annotate(patch.status(), what);
    if (!patch->has_value()) return false;
    absl::StatusOr<std::string> patched = client.Patch(path, **patch, call);
    if (patched.ok()) return true;
    last = Annotate(patched.status(), absl::StrCat("patch caBundle of ", what));
    if (!absl::IsAborted(patched.status())) return last;
  }
  return last;
}

}  // namespace

absl::StatusOr<bool> EnsureCaBundle(KubeClient& client,
                                    std::string_view config_name,
                                    std::string_view ca_pem,
                                    std::stop_token stop) {
  return EnsureCaBundleOf(
      client,
      absl::StrCat("/apis/admissionregistration.k8s.io/v1/"
                   "mutatingwebhookconfigurations/",
                   Sv(config_name)),
      absl::StrCat("MutatingWebhookConfiguration ", Sv(config_name)),
      EncodeCaBundlePatch, ca_pem, stop);
}

absl::StatusOr<bool> EnsureApiServiceCaBundle(KubeClient& client,
                                              std::string_view name,
                                              std::string_view ca_pem,
                                              std::stop_token stop) {
  return EnsureCaBundleOf(
      client,
      absl::StrCat("/apis/apiregistration.k8s.io/v1/apiservices/", Sv(name)),
      absl::StrCat("APIService ", Sv(name)), EncodeApiServiceCaBundlePatch,
      ca_pem, stop);
}

}  // namespace gpusched::kube
