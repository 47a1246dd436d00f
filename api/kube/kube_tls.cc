// The client TLS context, built from PEM text held in memory.
#include <openssl/ssl.h>

#include <boost/asio/buffer.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "api/kube/connection.h"

namespace gpusched::kube::internal {
namespace {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;

absl::Status PemError(std::string_view what,
                      const boost::system::error_code& ec) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: not usable PEM: %s", what, ec.message()));
}

absl::Status LoadIdentity(ssl::context& context, const KubeConfig& config) {
  boost::system::error_code ec;
  context.use_certificate_chain(asio::buffer(config.client_cert_pem), ec);
  if (ec) return PemError("client certificate", ec);
  context.use_private_key(asio::buffer(config.client_key_pem),
                          ssl::context::pem, ec);
  if (ec) return PemError("client key", ec);
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    return absl::InvalidArgumentError(
        "client key does not match the client certificate");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ssl::context>> MakeTlsContext(
    const KubeConfig& config) {
  auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
  context->set_verify_mode(ssl::verify_peer);
  boost::system::error_code ec;
  if (config.ca_pem.empty()) {
    context->set_default_verify_paths(ec);
    if (ec) return PemError("system CA store", ec);
  } else {
    // Reads every certificate of a bundle, not only the first.
    context->add_certificate_authority(asio::buffer(config.ca_pem), ec);
    if (ec) return PemError("certificate authority", ec);
  }
  if (!config.client_cert_pem.empty()) {
    if (absl::Status s = LoadIdentity(*context, config); !s.ok()) return s;
  }
  return context;
}

}  // namespace gpusched::kube::internal
