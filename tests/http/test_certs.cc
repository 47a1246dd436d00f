#include "tests/http/test_certs.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

namespace gpusched::http::testing {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct CertFree {
  void operator()(X509* cert) const { X509_free(cert); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;
using Extensions = std::vector<std::pair<int, const char*>>;

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "test PKI: %s failed\n", what);
    std::abort();
  }
}

Key NewKey() {
  Key key(EVP_EC_gen("P-256"));
  Check(key != nullptr, "EVP_EC_gen");
  return key;
}

void AddExtensions(X509* cert, X509* issuer, const Extensions& extensions) {
  X509V3_CTX context;
  X509V3_set_ctx_nodb(&context);
  X509V3_set_ctx(&context, issuer, cert, nullptr, nullptr, 0);
  for (const auto& [nid, value] : extensions) {
    X509_EXTENSION* extension =
        X509V3_EXT_conf_nid(nullptr, &context, nid, value);
    Check(extension != nullptr, value);
    Check(X509_add_ext(cert, extension, -1) == 1, "X509_add_ext");
    X509_EXTENSION_free(extension);
  }
}

// `issuer` null makes a self-signed certificate.
Cert NewCert(EVP_PKEY* key, const char* common_name, X509* issuer,
             EVP_PKEY* issuer_key, const Extensions& extensions) {
  static long serial = 1;
  Cert cert(X509_new());
  X509* x = cert.get();
  X509_set_version(x, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
  X509_gmtime_adj(X509_getm_notBefore(x), -3600);
  X509_gmtime_adj(X509_getm_notAfter(x), 24 * 3600);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(
      name, "CN", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>(common_name), -1, -1, 0);
  X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
  AddExtensions(x, issuer ? issuer : x, extensions);
  Check(X509_sign(x, issuer ? issuer_key : key, EVP_sha256()) > 0, "X509_sign");
  return cert;
}

Cert NewCa(EVP_PKEY* key, const char* common_name) {
  return NewCert(key, common_name, nullptr, nullptr,
                 {{NID_basic_constraints, "critical,CA:TRUE"},
                  {NID_key_usage, "critical,keyCertSign,cRLSign"},
                  {NID_subject_key_identifier, "hash"}});
}

Cert NewLeaf(EVP_PKEY* key, const char* common_name, X509* ca, EVP_PKEY* ca_key,
             const char* usage, const char* san) {
  Extensions extensions = {{NID_basic_constraints, "CA:FALSE"},
                           {NID_key_usage, "critical,digitalSignature"},
                           {NID_ext_key_usage, usage},
                           {NID_authority_key_identifier, "keyid"}};
  if (san != nullptr) extensions.emplace_back(NID_subject_alt_name, san);
  return NewCert(key, common_name, ca, ca_key, extensions);
}

void WriteCert(const std::string& path, X509* cert) {
  FILE* file = std::fopen(path.c_str(), "w");
  Check(file != nullptr, "fopen");
  Check(PEM_write_X509(file, cert) == 1, "PEM_write_X509");
  std::fclose(file);
}

void WriteKey(const std::string& path, EVP_PKEY* key) {
  FILE* file = std::fopen(path.c_str(), "w");
  Check(file != nullptr, "fopen");
  Check(PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr,
                             nullptr) == 1,
        "PEM_write_PrivateKey");
  std::fclose(file);
}

}  // namespace

TestPki CreateTestPki() {
  std::string templ =
      (std::filesystem::temp_directory_path() / "gpusched-http-XXXXXX")
          .string();
  Check(mkdtemp(templ.data()) != nullptr, "mkdtemp");
  TestPki pki{.dir = templ};
  auto path = [&](const char* name) { return pki.dir + "/" + name; };

  Key ca_key = NewKey();
  Cert ca = NewCa(ca_key.get(), "gpusched test CA");
  Key server_key = NewKey();
  Cert server = NewLeaf(server_key.get(), "localhost", ca.get(), ca_key.get(),
                        "serverAuth", "IP:127.0.0.1,DNS:localhost,IP:::1");
  Key client_key = NewKey();
  Cert client = NewLeaf(client_key.get(), "test client", ca.get(), ca_key.get(),
                        "clientAuth", nullptr);
  Key other_ca_key = NewKey();
  Cert other_ca = NewCa(other_ca_key.get(), "unrelated CA");
  Key stranger_key = NewKey();
  Cert stranger = NewLeaf(stranger_key.get(), "stranger", other_ca.get(),
                          other_ca_key.get(), "clientAuth", nullptr);

  pki.ca_cert = path("ca.pem");
  WriteCert(pki.ca_cert, ca.get());
  pki.server_cert = path("server.pem");
  WriteCert(pki.server_cert, server.get());
  pki.server_key = path("server-key.pem");
  WriteKey(pki.server_key, server_key.get());
  pki.client_cert = path("client.pem");
  WriteCert(pki.client_cert, client.get());
  pki.client_key = path("client-key.pem");
  WriteKey(pki.client_key, client_key.get());
  pki.stranger_cert = path("stranger.pem");
  WriteCert(pki.stranger_cert, stranger.get());
  pki.stranger_key = path("stranger-key.pem");
  WriteKey(pki.stranger_key, stranger_key.get());
  return pki;
}

void RemoveTestPki(const TestPki& pki) {
  std::error_code ignored;
  std::filesystem::remove_all(pki.dir, ignored);
}

}  // namespace gpusched::http::testing
