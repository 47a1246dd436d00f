#include "api/server/admission_webhook.h"

#include <spdlog/spdlog.h>

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "scheduler/base/strings.h"

namespace gpusched {

void AdmissionWebhook::Register(http::Router& router) const {
  router.Add("POST", kMutatePodsPath,
             [webhook = *this](const http::Request& request) {
               return webhook.Handle(request);
             });
}

http::Response AdmissionWebhook::Handle(const http::Request& request) const {
  absl::StatusOr<AdmissionDecision> decision =
      DecidePodGating(request.body, options_);
  if (!decision.ok()) {
    spdlog::warn("webhook: bad review remote={} error={}", request.remote,
                 Message(decision.status()));
    return http::JsonError(400, Message(decision.status()));
  }
  if (decision->gating == PodGating::kGate) {
    spdlog::debug("webhook: gated pod={} uid={}", decision->pod, decision->uid);
  } else if (decision->gating == PodGating::kAdopt) {
    spdlog::info("webhook: moved pod={} uid={} to scheduler {} and gated it",
                 decision->pod, decision->uid, options_.scheduler_name);
  }
  return http::Response{.body = AdmissionResponseJson(*decision)};
}

void AddWebhookFlags(FlagSet& flags, WebhookFlags& out) {
  flags.String("webhook-listen", &out.listen,
               "the HTTPS mutating webhook that gates new pods listens here "
               "(e.g. 0.0.0.0:9443); needs live mode; empty: off",
               "ADDR:PORT");
  flags.String("webhook-dns-names", &out.dns_names,
               "comma-separated names (or IPs) of the webhook's serving "
               "certificate (the Service's DNS names)",
               "NAMES");
  flags.String("webhook-secret", &out.secret,
               "the Secret holding the webhook's CA and certificate; created "
               "when absent",
               "NS/NAME");
  flags.String("webhook-config-name", &out.config_name,
               "MutatingWebhookConfiguration whose caBundle gpusched keeps "
               "(gpusched)",
               "NAME");
  flags.String("webhook-scheduler-name", &out.scheduler_name,
               "pods with this spec.schedulerName are gated (gpusched)",
               "NAME");
  flags.String("webhook-adopt-schedulers", &out.adopted_schedulers,
               "comma-separated schedulerNames whose queued pods (a queue "
               "label or a gang) are moved to --webhook-scheduler-name and "
               "gated (default-scheduler); empty: none",
               "NAMES");
}

absl::StatusOr<WebhookServerOptions> WebhookServerOptionsFrom(
    const WebhookFlags& flags) {
  WebhookServerOptions options{.listener = {.listen = flags.listen}};
  kube::WebhookCertOptions& certs = options.listener.certs;
  options.review.scheduler_name = flags.scheduler_name;
  options.review.adopted_schedulers =
      absl::StrSplit(flags.adopted_schedulers, ',', absl::SkipWhitespace());
  if (absl::Status s = SecretFromFlag("--webhook-secret", flags.secret, certs);
      !s.ok()) {
    return s;
  }
  certs.webhook_config_name = flags.config_name;
  certs.names = absl::StrSplit(flags.dns_names, ',', absl::SkipWhitespace());
  if (certs.names.empty() || flags.config_name.empty() ||
      flags.scheduler_name.empty()) {
    return absl::InvalidArgumentError(
        "serve: --webhook-dns-names, --webhook-config-name and "
        "--webhook-scheduler-name must not be empty");
  }
  return options;
}

std::unique_ptr<WebhookServer> WebhookServer::Start(
    kube::KubeClient& client, WebhookServerOptions options) {
  auto router = std::make_shared<http::Router>();
  AdmissionWebhook(options.review).Register(*router);
  const CertifiedListenerSettings& listener = options.listener;
  const std::string config_name = listener.certs.webhook_config_name;
  CertifiedServerOptions certified{
      .component = "webhook",
      .down_effect = "pods are not gated",
      .server = {.listen = listener.listen,
                 // The handler answers a review over its own limit with a
                 // 400 naming it; the transport's larger bound only stops
                 // a runaway body.
                 .body_limit_bytes = 4 * options.review.body_limit_bytes,
                 .read_timeout = listener.read_timeout,
                 .threads = listener.threads},
      .certs = listener.certs,
      .ca_bundle_holder =
          absl::StrCat("MutatingWebhookConfiguration ", config_name),
      .ensure_ca_bundle =
          [config_name](kube::KubeClient& client, std::string_view ca_pem,
                        std::stop_token stop) {
            return kube::EnsureCaBundle(client, config_name, ca_pem, stop);
          },
      .recheck = listener.recheck};
  spdlog::info("webhook: path={} scheduler={} adopts=[{}]", kMutatePodsPath,
               options.review.scheduler_name,
               absl::StrJoin(options.review.adopted_schedulers, ","));
  return std::unique_ptr<WebhookServer>(
      new WebhookServer(CertifiedServer::Start(
          client, std::move(certified), [router](const http::Request& request) {
            return router->Handle(request);
          })));
}

}  // namespace gpusched
