// The one place that builds OpenSSL contexts: for the server and for every
// client (the Kubernetes API client included). Internal to the http library
// (it exposes Asio types).
#ifndef GPUSCHED_API_HTTP_TLS_H_
#define GPUSCHED_API_HTTP_TLS_H_

#include <boost/asio/ssl/context.hpp>
#include <memory>

#include "absl/status/statusor.h"
#include "api/http/client.h"
#include "api/http/server.h"

namespace gpusched::http::internal {

// nullptr when the options ask for plain HTTP. TLS 1.2 or newer; with a
// client CA, clients must present a certificate that chains to it.
absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeServerTlsContext(
    const ServerOptions& options);

// nullptr unless options.tls. TLS 1.2 or newer; always verifies the server
// certificate, against options.ca_file or ca_pem or else the system store
// (the connection checks the server name); presents the client certificate
// of cert_file/key_file or cert_pem/key_pem if set.
absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeClientTlsContext(
    const ClientOptions& options);

}  // namespace gpusched::http::internal

#endif  // GPUSCHED_API_HTTP_TLS_H_
