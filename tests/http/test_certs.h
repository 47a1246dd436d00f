// Throwaway PKI generated at test time with the OpenSSL C API, so that no key
// material is committed: a CA, a server certificate for 127.0.0.1/localhost,
// a client certificate from that CA, and one from an unrelated CA.
#ifndef GPUSCHED_TESTS_HTTP_TEST_CERTS_H_
#define GPUSCHED_TESTS_HTTP_TEST_CERTS_H_

#include <string>

namespace gpusched::http::testing {

struct TestPki {
  std::string dir;  // Temporary directory holding all files.
  std::string ca_cert;
  std::string server_cert, server_key;
  std::string client_cert, client_key;
  std::string stranger_cert, stranger_key;  // Signed by another CA.
};

// Writes the PEM files into a fresh temporary directory. Aborts the test
// binary on OpenSSL failure (nothing useful can run without them).
TestPki CreateTestPki();

// Removes the directory created by CreateTestPki.
void RemoveTestPki(const TestPki& pki);

}  // namespace gpusched::http::testing

#endif  // GPUSCHED_TESTS_HTTP_TEST_CERTS_H_
