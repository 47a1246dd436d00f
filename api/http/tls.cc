#include "api/http/tls.h"

#include <openssl/ssl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpusched::http::internal {
namespace {

namespace ssl = boost::asio::ssl;
using Context = std::unique_ptr<ssl::context>;

// OpenSSL reports a missing file as an opaque "system lib" error; checking
// first gives the operator the errno text instead.
absl::Status CheckReadable(std::string_view what, const std::string& path) {
  FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s %s: %s", what, path, std::strerror(errno)));
  }
  std::fclose(file);
  return absl::OkStatus();
}

absl::Status FileError(std::string_view what, const std::string& path,
                       const boost::system::error_code& ec) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s %s: %s", what, path, ec.message()));
}

Context NewContext(ssl::context::method method) {
  auto context = std::make_unique<ssl::context>(method);
  SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
  context->set_options(ssl::context::default_workarounds |
                       ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  return context;
}

// Loads a PEM certificate chain and its key into `context`.
absl::Status LoadIdentity(ssl::context& context, const std::string& cert,
                          const std::string& key, std::string_view prefix) {
  std::string cert_what = absl::StrFormat("%scert_file", prefix);
  std::string key_what = absl::StrFormat("%skey_file", prefix);
  if (auto status = CheckReadable(cert_what, cert); !status.ok()) {
    return status;
  }
  if (auto status = CheckReadable(key_what, key); !status.ok()) return status;
  boost::system::error_code ec;
  context.use_certificate_chain_file(cert, ec);
  if (ec) return FileError(cert_what, cert, ec);
  context.use_private_key_file(key, ssl::context::pem, ec);
  if (ec) return FileError(key_what, key, ec);
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(key_what, " ", key, " does not match ", cert));
  }
  return absl::OkStatus();
}

absl::Status RequireClientCertificates(ssl::context& context,
                                       const std::string& ca_file) {
  if (auto status = CheckReadable("client_ca_file", ca_file); !status.ok()) {
    return status;
  }
  boost::system::error_code ec;
  context.load_verify_file(ca_file, ec);
  if (ec) return FileError("client_ca_file", ca_file, ec);
  context.set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  // Advertise the CA so clients holding several certificates pick this one.
  if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(ca_file.c_str())) {
    SSL_CTX_set_client_CA_list(context.native_handle(), names);
  }
  return absl::OkStatus();
}

// Loads a PEM certificate chain and its key held in memory.
absl::Status LoadIdentityPem(ssl::context& context, const std::string& cert,
                             const std::string& key) {
  boost::system::error_code ec;
  context.use_certificate_chain(boost::asio::buffer(cert), ec);
  if (ec) return absl::InvalidArgumentError("tls_cert_pem: " + ec.message());
  context.use_private_key(boost::asio::buffer(key), ssl::context::pem, ec);
  if (ec) return absl::InvalidArgumentError("tls_key_pem: " + ec.message());
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    return absl::InvalidArgumentError(
        "tls_key_pem does not match tls_cert_pem");
  }
  return absl::OkStatus();
}

// The identity options name either two files or two PEM texts, or nothing.
absl::Status CheckIdentityOptions(const ServerOptions& options) {
  const bool pem =
      !options.tls_cert_pem.empty() || !options.tls_key_pem.empty();
  if (pem && (options.tls_cert_pem.empty() || options.tls_key_pem.empty() ||
              !options.tls_cert_file.empty() ||
              !options.tls_key_file.empty())) {
    return absl::InvalidArgumentError(
        "tls_cert_pem and tls_key_pem go together, without the file options");
  }
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        "tls_cert_file and tls_key_file must be set together");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Context> MakeServerTlsContext(const ServerOptions& options) {
  if (auto status = CheckIdentityOptions(options); !status.ok()) return status;
  const bool pem = !options.tls_cert_pem.empty();
  if (!pem && options.tls_cert_file.empty()) {
    if (!options.client_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "client_ca_file requires tls_cert_file and tls_key_file");
    }
    return Context();
  }
  Context context = NewContext(ssl::context::tls_server);
  auto status = pem ? LoadIdentityPem(*context, options.tls_cert_pem,
                                      options.tls_key_pem)
                    : LoadIdentity(*context, options.tls_cert_file,
                                   options.tls_key_file, "tls_");
  if (status.ok() && !options.client_ca_file.empty()) {
    status = RequireClientCertificates(*context, options.client_ca_file);
  }
  if (!status.ok()) return status;
  return context;
}

absl::StatusOr<Context> MakeClientTlsContext(const ClientOptions& options) {
  if (!options.tls) return Context();
  if (options.cert_file.empty() != options.key_file.empty()) {
    return absl::InvalidArgumentError(
        "cert_file and key_file must be set together");
  }
  Context context = NewContext(ssl::context::tls_client);
  context->set_verify_mode(ssl::verify_peer);
  boost::system::error_code ec;
  if (options.ca_file.empty()) {
    context->set_default_verify_paths(ec);
    if (ec) return FileError("default CA paths", "", ec);
  } else {
    if (auto status = CheckReadable("ca_file", options.ca_file); !status.ok()) {
      return status;
    }
    context->load_verify_file(options.ca_file, ec);
    if (ec) return FileError("ca_file", options.ca_file, ec);
  }
  if (!options.cert_file.empty()) {
    auto status =
        LoadIdentity(*context, options.cert_file, options.key_file, "");
    if (!status.ok()) return status;
  }
  return context;
}

}  // namespace gpusched::http::internal
