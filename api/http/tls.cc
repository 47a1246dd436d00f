#include "api/http/tls.h"

#include <openssl/ssl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
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

// How errors name an identity's options: `prefix` goes before the file
// options' names ("tls_" for the server); the PEM texts have names of their
// own.
struct IdentityNames {
  std::string_view prefix;
  std::string_view cert_name;
  std::string_view key_name;
};
constexpr IdentityNames kServerIdentity{"tls_", "tls_cert_pem", "tls_key_pem"};
constexpr IdentityNames kClientIdentity{"", "client certificate", "client key"};

// A certificate chain and its key: two files or two PEM texts (or none).
struct Identity {
  const std::string& cert_file;
  const std::string& key_file;
  const std::string& cert_pem;
  const std::string& key_pem;
  IdentityNames names;
};

// The options name either two files or two PEM texts, or nothing.
absl::Status CheckIdentity(const Identity& id) {
  const bool pem = !id.cert_pem.empty() || !id.key_pem.empty();
  if (pem && (id.cert_pem.empty() || id.key_pem.empty() ||
              !id.cert_file.empty() || !id.key_file.empty())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%1$scert_pem and %1$skey_pem go together, without the file options",
        id.names.prefix));
  }
  if (id.cert_file.empty() != id.key_file.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%1$scert_file and %1$skey_file must be set together",
                        id.names.prefix));
  }
  return absl::OkStatus();
}

absl::Status KeyMatches(ssl::context& context, const std::string& message) {
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    return absl::InvalidArgumentError(message);
  }
  return absl::OkStatus();
}

absl::Status LoadIdentityFiles(ssl::context& context, const Identity& id) {
  std::string cert_what = absl::StrFormat("%scert_file", id.names.prefix);
  std::string key_what = absl::StrFormat("%skey_file", id.names.prefix);
  if (auto status = CheckReadable(cert_what, id.cert_file); !status.ok()) {
    return status;
  }
  if (auto status = CheckReadable(key_what, id.key_file); !status.ok()) {
    return status;
  }
  boost::system::error_code ec;
  context.use_certificate_chain_file(id.cert_file, ec);
  if (ec) return FileError(cert_what, id.cert_file, ec);
  context.use_private_key_file(id.key_file, ssl::context::pem, ec);
  if (ec) return FileError(key_what, id.key_file, ec);
  return KeyMatches(
      context, absl::StrFormat("%s %s does not match %s", key_what, id.key_file,
                               id.cert_file));
}

absl::Status PemError(std::string_view what,
                      const boost::system::error_code& ec) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: not usable PEM: %s", what, ec.message()));
}

absl::Status LoadIdentityPem(ssl::context& context, const Identity& id) {
  boost::system::error_code ec;
  context.use_certificate_chain(boost::asio::buffer(id.cert_pem), ec);
  if (ec) return PemError(id.names.cert_name, ec);
  context.use_private_key(boost::asio::buffer(id.key_pem), ssl::context::pem,
                          ec);
  if (ec) return PemError(id.names.key_name, ec);
  return KeyMatches(context,
                    absl::StrFormat("%s does not match %s", id.names.key_name,
                                    id.names.cert_name));
}

// Loads the identity, if the options name one.
absl::Status LoadIdentity(ssl::context& context, const Identity& id) {
  if (!id.cert_pem.empty()) return LoadIdentityPem(context, id);
  if (!id.cert_file.empty()) return LoadIdentityFiles(context, id);
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

// The handshake asks for a certificate and takes any (even none): the
// handler verifies it, against a CA it may reload while serving.
void AskClientCertificates(ssl::context& context) {
  SSL_CTX_set_verify(context.native_handle(), SSL_VERIFY_PEER,
                     [](int, X509_STORE_CTX*) { return 1; });
}

// The CAs a client trusts: a file, PEM text, or the system store.
absl::Status LoadServerAuthorities(ssl::context& context,
                                   const ClientOptions& options) {
  if (!options.ca_file.empty() && !options.ca_pem.empty()) {
    return absl::InvalidArgumentError("ca_file and ca_pem exclude each other");
  }
  boost::system::error_code ec;
  if (!options.ca_pem.empty()) {
    // Reads every certificate of a bundle, not only the first.
    context.add_certificate_authority(boost::asio::buffer(options.ca_pem), ec);
    if (ec) return PemError("certificate authority", ec);
  } else if (!options.ca_file.empty()) {
    if (auto status = CheckReadable("ca_file", options.ca_file); !status.ok()) {
      return status;
    }
    context.load_verify_file(options.ca_file, ec);
    if (ec) return FileError("ca_file", options.ca_file, ec);
  } else {
    context.set_default_verify_paths(ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrFormat("system CA store: %s", ec.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Context> MakeServerTlsContext(const ServerOptions& options) {
  const Identity identity{options.tls_cert_file, options.tls_key_file,
                          options.tls_cert_pem, options.tls_key_pem,
                          kServerIdentity};
  if (auto status = CheckIdentity(identity); !status.ok()) return status;
  if (options.tls_cert_pem.empty() && options.tls_cert_file.empty()) {
    if (!options.client_ca_file.empty() || options.ask_client_certificate) {
      return absl::InvalidArgumentError(
          "client_ca_file and ask_client_certificate require a serving "
          "certificate");
    }
    return Context();
  }
  if (!options.client_ca_file.empty() && options.ask_client_certificate) {
    return absl::InvalidArgumentError(
        "client_ca_file and ask_client_certificate exclude each other");
  }
  Context context = NewContext(ssl::context::tls_server);
  absl::Status status = LoadIdentity(*context, identity);
  if (status.ok() && !options.client_ca_file.empty()) {
    status = RequireClientCertificates(*context, options.client_ca_file);
  }
  if (options.ask_client_certificate) AskClientCertificates(*context);
  if (!status.ok()) return status;
  return context;
}

absl::StatusOr<Context> MakeClientTlsContext(const ClientOptions& options) {
  if (!options.tls) return Context();
  const Identity identity{options.cert_file, options.key_file, options.cert_pem,
                          options.key_pem, kClientIdentity};
  if (auto status = CheckIdentity(identity); !status.ok()) return status;
  Context context = NewContext(ssl::context::tls_client);
  context->set_verify_mode(ssl::verify_peer);
  absl::Status status = LoadServerAuthorities(*context, options);
  if (status.ok()) status = LoadIdentity(*context, identity);
  if (!status.ok()) return status;
  return context;
}

}  // namespace gpusched::http::internal
